import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  assertValidJob,
  assertValidQueueName,
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  JOB_RETENTION_SECONDS,
  type AddJobOptions,
  type DurableQueue,
  type JobInfo,
  type JsonValue,
} from './durable-queue.ts';

export type BullmqQueueOptions = {
  /** The application's client; this queue opens its own connections from it and never uses it directly. */
  redis: Redis;
  /** Key prefix for every BullMQ key (config.redisPrefix), so several deployments or test runs share one Redis. */
  prefix: string;
  logger: Logger;
};

/**
 * How many times a job may lose its worker (the process died, or its event loop blocked past the lock) and still run.
 * BullMQ's default is 1: a job whose worker is killed twice (two deploys, two OOM kills) was failed without running,
 * whatever attempts it had left. Each stall costs one lock period of delay, so a job that itself kills its process
 * still ends, after this many process deaths.
 */
export const MAX_STALLS = 10;

/**
 * A {@link DurableQueue} on BullMQ 6 (Redis). Jobs, attempts and due times live in Redis, so they survive a restart
 * of this process; BullMQ's stalled-job check re-runs a job whose worker died (after its 30 s lock expires), up to
 * {@link MAX_STALLS} times.
 *
 * Connections: producers share one duplicate of the app's client (it keeps the app's fail-fast retry setting, so an
 * `add` during a Redis outage errors instead of hanging). Workers are given a second duplicate with
 * `maxRetriesPerRequest: null`, which BullMQ requires for blocking commands; each worker duplicates it again for
 * its own connections and closes those itself. BullMQ's ESM build cannot load ioredis from connection options,
 * so it is always handed client instances.
 */
export function createBullmqQueue(options: BullmqQueueOptions): DurableQueue {
  const { prefix, logger } = options;
  const producerConnection = options.redis.duplicate();
  const workerConnection = options.redis.duplicate({ maxRetriesPerRequest: null });
  const queues = new Map<string, Queue<JsonValue>>();
  const workers = new Map<string, Worker<JsonValue>>();

  const queueFor = (name: string): Queue<JsonValue> => {
    let queue = queues.get(name);
    if (!queue) {
      queue = new Queue<JsonValue>(name, { connection: producerConnection, prefix });
      queue.on('error', (error) => logger.error({ err: error, queue: name }, 'queue connection error'));
      queues.set(name, queue);
    }
    return queue;
  };

  const addMany: DurableQueue['addMany'] = async (queue, jobs) => {
    for (const job of jobs) assertValidJob(queue, job.options);
    if (jobs.length === 0) return;
    // A lone job goes through `add`, which shares the connection's automatic pipeline; building a pipeline of its
    // own costs more than the job.
    if (jobs.length === 1) {
      await queueFor(queue).add(jobs[0]!.name, jobs[0]!.data, bullmqOptions(jobs[0]!.options));
      return;
    }
    // One pipeline: the adds reach Redis in array order on one connection (not atomically: a caller that fails
    // half way adds again, and the job ids dedupe).
    await queueFor(queue).addBulk(jobs.map((job) => ({ name: job.name, data: job.data, opts: bullmqOptions(job.options) })));
  };

  return {
    backend: 'bullmq',
    async add(queue, name, data, addOptions) {
      assertValidJob(queue, addOptions);
      // An existing jobId makes BullMQ return the existing job without adding: that is the dedupe.
      await queueFor(queue).add(name, data, bullmqOptions(addOptions));
    },
    addMany,
    async requeue(queue, jobs) {
      await addMany(queue, jobs);
      // The states are asked at once (ioredis pipelines them): a sweep of 200 jobs is not 200 round trips in a row.
      await Promise.all(jobs.map(async ({ options: { jobId } }) => {
        const state = await queueFor(queue).getJobState(jobId);
        if (state !== 'completed' && state !== 'failed') return;
        const job = await queueFor(queue).getJob(jobId);
        // Atomic on BullMQ's side: it moves the job back to wait only if it is still in that finished set, so a
        // job another process requeued meanwhile is left alone (the error says so and is expected).
        await job?.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true }).catch((error: unknown) => {
          logger.debug({ err: error, queue, jobId }, 'finished job not requeued: it moved meanwhile');
        });
      }));
    },
    async process(queue, handler, processOptions = {}) {
      assertValidQueueName(queue);
      if (workers.has(queue)) throw new Error(`Queue ${queue} already has a consumer in this process`);
      const worker = new Worker<JsonValue>(
        queue,
        (job: Job<JsonValue>) => handler({ id: String(job.id), name: job.name, data: job.data, attempt: job.attemptsStarted }),
        {
          connection: workerConnection,
          prefix,
          concurrency: processOptions.concurrency ?? 1,
          maxStalledCount: MAX_STALLS,
          // The stalled check runs every half lock, so a dead worker's job is taken again at most 1.5 locks after its
          // last renewal rather than up to 30 s later whatever the lock.
          ...(processOptions.lockMs
            ? { lockDuration: processOptions.lockMs, stalledInterval: Math.max(1000, Math.round(processOptions.lockMs / 2)) }
            : {}),
        },
      );
      worker.on('error', (error) => logger.error({ err: error, queue }, 'queue worker error'));
      worker.on('failed', (job, error) => logger.warn({ err: error, queue, jobId: job?.id, attempt: job?.attemptsStarted }, 'job run failed'));
      workers.set(queue, worker);
      await worker.waitUntilReady();
    },
    async getJob(queue, jobId) {
      // State first, then the job: read in that order, a job that just failed never shows an earlier run's error
      // (the other order could pair the previous run's failedReason with the new 'failed' state).
      const state = await queueFor(queue).getJobState(jobId);
      const job = state === 'unknown' ? undefined : await queueFor(queue).getJob(jobId);
      if (!job) return null;
      return {
        id: jobId,
        name: job.name,
        status: toJobStatus(state),
        attemptsStarted: job.attemptsStarted,
        lastError: job.failedReason || null,
      };
    },
    async jobStatus(queue, jobId) {
      const state = await queueFor(queue).getJobState(jobId);
      return state === 'unknown' ? null : toJobStatus(state);
    },
    async close() {
      // Workers first: each waits for its running jobs before its connections close.
      await Promise.all([...workers.values()].map((worker) => worker.close()));
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      workers.clear();
      queues.clear();
      await Promise.all([producerConnection.quit(), workerConnection.quit()]);
    },
  };
}

function bullmqOptions(options: Omit<AddJobOptions, 'transaction'>) {
  return {
    jobId: options.jobId,
    delay: options.delayMs ?? 0,
    attempts: options.attempts ?? DEFAULT_ATTEMPTS,
    backoff: { type: 'exponential', delay: options.backoffMs ?? DEFAULT_BACKOFF_MS },
    removeOnComplete: { age: JOB_RETENTION_SECONDS.completed },
    removeOnFail: { age: JOB_RETENTION_SECONDS.failed },
  };
}

function toJobStatus(state: string): JobInfo['status'] {
  if (state === 'active' || state === 'completed' || state === 'failed') return state;
  // delayed (including a backoff between runs), prioritized, waiting-children: all still to run.
  return 'waiting';
}
