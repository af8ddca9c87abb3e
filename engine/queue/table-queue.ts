import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createCoalescedTask } from './coalesced-task.ts';
import { assertValidJob, assertValidQueueName, describeError, type DurableQueue, type JobHandler } from './durable-queue.ts';
import { createQueueJobStore, type ClaimedJob, type QueueJobStore } from './table-queue-store.ts';

export type TableQueueOptions = {
  orm: MikroORM;
  logger: Logger;
  /** How often an idle consumer looks for due jobs (ms). Default 200. Also bounds how late a delayed job starts. */
  pollIntervalMs?: number;
  /** How long a claimed job is reserved for its worker without a renewal (ms). Default 30 000, renewed every third. */
  leaseMs?: number;
};

/** How often a consumer fails jobs abandoned by dead workers and prunes finished jobs past their retention. */
const MAINTENANCE_INTERVAL_MS = 60_000;

/**
 * A {@link DurableQueue} kept in the PostgreSQL table `queue_job`, for deployments without Redis (notably the
 * embedded PGlite). Consumers poll for due jobs and claim them with `FOR UPDATE SKIP LOCKED`, so several processes on
 * one PostgreSQL share the work; a claimed job carries a lease that its worker renews while the handler runs, and a
 * job whose lease runs out (its process died) is claimed again. Statements are single and short: nothing waits
 * inside a transaction, which PGlite's single connection requires.
 */
export function createTableQueue(options: TableQueueOptions): DurableQueue {
  const store = createQueueJobStore(options.orm);
  const consumers = new Map<string, Consumer>();
  const settings = { pollIntervalMs: options.pollIntervalMs ?? 200, leaseMs: options.leaseMs ?? 30_000, logger: options.logger };
  let closed = false;

  return {
    backend: 'table',
    async add(queue, name, data, addOptions) {
      assertValidJob(queue, addOptions);
      await store.insert(queue, name, data, addOptions);
      // A job due now starts at once in this process rather than at the next poll. Inside a caller's transaction it
      // is not visible until commit, so the poll picks it up.
      if (!addOptions.transaction && !addOptions.delayMs) consumers.get(queue)?.kick();
    },
    async addMany(queue, jobs, transaction) {
      for (const job of jobs) assertValidJob(queue, job.options);
      if (jobs.length === 0) return;
      await store.insertMany(queue, jobs, transaction);
      if (!transaction && jobs.some((job) => !job.options.delayMs)) consumers.get(queue)?.kick();
    },
    async requeue(queue, jobs) {
      for (const job of jobs) assertValidJob(queue, job.options);
      if (jobs.length === 0) return;
      await store.insertMany(queue, jobs);
      await store.rerunFinished(queue, jobs.map((job) => job.options.jobId));
      consumers.get(queue)?.kick();
    },
    async process(queue, handler, processOptions = {}) {
      assertValidQueueName(queue);
      if (closed) throw new Error('The queue is closed');
      if (consumers.has(queue)) throw new Error(`Queue ${queue} already has a consumer in this process`);
      const concurrency = processOptions.concurrency ?? 1;
      const leaseMs = processOptions.lockMs ?? settings.leaseMs;
      consumers.set(queue, startConsumer(store, queue, handler, { ...settings, leaseMs, concurrency }));
    },
    getJob: (queue, jobId) => store.get(queue, jobId),
    jobStatus: async (queue, jobId) => (await store.get(queue, jobId))?.status ?? null,
    async close() {
      closed = true;
      await Promise.all([...consumers.values()].map((consumer) => consumer.stop()));
      consumers.clear();
    },
  };
}

type Consumer = { kick(): void; stop(): Promise<void> };
type ConsumerSettings = { pollIntervalMs: number; leaseMs: number; concurrency: number; logger: Logger };

function startConsumer(store: QueueJobStore, queue: string, handler: JobHandler, settings: ConsumerSettings): Consumer {
  const { leaseMs, concurrency, logger } = settings;
  const runs = new Set<Promise<void>>();
  let lastMaintenance = 0;

  const poll = createCoalescedTask(
    async () => {
      if (Date.now() - lastMaintenance >= MAINTENANCE_INTERVAL_MS) {
        lastMaintenance = Date.now();
        await store.maintain(queue);
      }
      while (runs.size < concurrency) {
        const wanted = concurrency - runs.size;
        const jobs = await store.claim(queue, wanted, leaseMs);
        for (const job of jobs) track(runJob(job));
        if (jobs.length < wanted) break;
      }
    },
    (error) => logger.error({ err: error, queue }, 'queue poll failed'),
  );

  const track = (run: Promise<void>): void => {
    runs.add(run);
    void run.finally(() => {
      runs.delete(run);
      // A free slot: look for the next job now instead of at the next tick of the timer.
      poll.trigger();
    });
  };

  const runJob = async (job: ClaimedJob): Promise<void> => {
    const renewal = setInterval(() => {
      store.renewLease(queue, job, leaseMs).then(
        (owned) => {
          if (!owned) logger.warn({ queue, jobId: job.id }, 'job lease lost: another worker may run it again');
        },
        (error: unknown) => logger.warn({ err: error, queue, jobId: job.id }, 'job lease renewal failed'),
      );
    }, Math.max(1, Math.floor(leaseMs / 3)));
    let failure: { error: unknown } | null = null;
    try {
      await handler(job);
    } catch (error) {
      failure = { error };
    } finally {
      clearInterval(renewal);
    }
    try {
      if (failure) {
        logger.warn({ err: failure.error, queue, jobId: job.id, attempt: job.attempt }, 'job run failed');
        await store.fail(queue, job, describeError(failure.error));
      } else {
        await store.complete(queue, job);
      }
    } catch (error) {
      // The job stays active; its lease expires and it runs again (delivery is at least once).
      logger.error({ err: error, queue, jobId: job.id }, 'could not record the outcome of a job run');
    }
  };

  const timer = setInterval(() => poll.trigger(), settings.pollIntervalMs);
  // The timer alone must not keep a process alive that has nothing else to do.
  timer.unref();
  poll.trigger();

  return {
    kick: () => poll.trigger(),
    async stop() {
      clearInterval(timer);
      await poll.stop();
      await Promise.all(runs);
    },
  };
}
