import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqQueue } from '../../engine/queue/bullmq-queue.ts';
import type { DurableQueue, QueuedJob } from '../../engine/queue/durable-queue.ts';
import { createTableQueue } from '../../engine/queue/table-queue.ts';
import { openQueueHarness, type QueueHarness } from '../support/queue-harness.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * The two ways a job used to end without its work done, whatever its attempts: its worker died twice (BullMQ's
 * default stall limit of 1), or it used up its attempts during a long outage and a sweep could not add it again.
 */
let harness: QueueHarness;
const opened: DurableQueue[] = [];

beforeAll(async () => {
  harness = await openQueueHarness();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((queue) => queue.close()));
});
afterAll(async () => {
  await harness.close();
});

const BACKENDS = [
  { backend: 'table', open: () => createTableQueue({ orm: harness.orm, logger: harness.logger, pollIntervalMs: 20 }) },
  { backend: 'bullmq', open: () => createBullmqQueue({ redis: harness.redis, prefix: harness.redisPrefix, logger: harness.logger }) },
] as const;

const track = (queue: DurableQueue): DurableQueue => {
  opened.push(queue);
  return queue;
};
const freshQueueName = () => `test-${randomBytes(4).toString('hex')}`;

describe('BullMQ: a job whose worker died', () => {
  it('still runs after its worker died twice, its attempts not used up', async () => {
    const queue = track(createBullmqQueue({ redis: harness.redis, prefix: harness.redisPrefix, logger: harness.logger }));
    const name = freshQueueName();
    const runs: QueuedJob[] = [];
    const releases: (() => void)[] = [];
    const hung = new Promise<void>((resolve) => releases.push(resolve));
    // The first two runs hang as in a process that died; losing their lock is what the process's death does.
    await queue.process(name, async (job) => {
      runs.push(job);
      if (runs.length <= 2) await hung;
    }, { concurrency: 3, lockMs: 1000 });
    await queue.add(name, 'work', {}, { jobId: 'stalls-twice', attempts: 3 });
    for (const died of [1, 2]) {
      await waitFor(`run ${died}`, () => runs.length >= died, 10_000);
      await harness.redis.del(`${harness.redisPrefix}:${name}:stalls-twice:lock`);
    }
    try {
      await waitFor('the job completed by a third run', async () => (await queue.getJob(name, 'stalls-twice'))?.status === 'completed', 15_000);
      expect(runs).toHaveLength(3);
    } finally {
      for (const release of releases) release();
    }
  }, 40_000);
});

describe.each(BACKENDS)('requeue on $backend', ({ open }) => {
  it('runs a job that failed for good again with fresh attempts, and leaves a waiting one alone', async () => {
    const queue = track(open());
    const name = freshQueueName();
    const runs: QueuedJob[] = [];
    let failing = true;
    await queue.process(name, async (job) => {
      runs.push(job);
      if (failing) throw new Error('the database is down');
    });
    await queue.add(name, 'work', { n: 1 }, { jobId: 'outlived', attempts: 2, backoffMs: 10 });
    await waitFor('the job failed for good', async () => (await queue.getJob(name, 'outlived'))?.status === 'failed', 10_000);
    expect(runs).toHaveLength(2);

    failing = false;
    await queue.requeue(name, [{ name: 'work', data: { n: 1 }, options: { jobId: 'outlived', attempts: 2 } }]);
    await waitFor('the requeued job completed', async () => (await queue.getJob(name, 'outlived'))?.status === 'completed', 10_000);
    expect(runs.map((run) => run.attempt)).toEqual([1, 2, 1]);

    await queue.add(name, 'work', {}, { jobId: 'later', delayMs: 60_000 });
    await queue.requeue(name, [{ name: 'work', data: {}, options: { jobId: 'later', delayMs: 0 } }]);
    expect((await queue.getJob(name, 'later'))?.status).toBe('waiting');
    expect(runs).toHaveLength(3);
  }, 40_000);
});
