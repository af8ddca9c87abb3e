import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqQueue } from '../../engine/queue/bullmq-queue.ts';
import type { DurableQueue, QueuedJob } from '../../engine/queue/durable-queue.ts';
import { createQueueJobStore } from '../../engine/queue/table-queue-store.ts';
import { createTableQueue } from '../../engine/queue/table-queue.ts';
import { openQueueHarness, type QueueHarness } from '../support/queue-harness.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

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
  {
    backend: 'table',
    open: () => createTableQueue({ orm: harness.orm, logger: harness.logger, pollIntervalMs: 20 }),
  },
  {
    backend: 'bullmq',
    open: () => createBullmqQueue({ redis: harness.redis, prefix: harness.redisPrefix, logger: harness.logger }),
  },
] as const;

/** A queue instance closed after the test; opening a second one on the same storage is a restarted process. */
function track(queue: DurableQueue): DurableQueue {
  opened.push(queue);
  return queue;
}

/** Each test uses its own queue name, so one test's jobs never reach another's consumer. */
const freshQueueName = () => `test-${randomBytes(4).toString('hex')}`;

/** A consumer that records every run (and its time) and lets the test decide what each run does. */
async function consume(queue: DurableQueue, name: string, behaviour: (job: QueuedJob) => Promise<void> = async () => {}, concurrency = 1) {
  const runs: (QueuedJob & { at: number })[] = [];
  await queue.process(name, async (job) => {
    runs.push({ ...job, at: Date.now() });
    await behaviour(job);
  }, { concurrency });
  return runs;
}

describe.each(BACKENDS)('durable queue on $backend', ({ open }) => {
  it('runs a job added twice with the same jobId once', async () => {
    const queue = track(open());
    const name = freshQueueName();
    await Promise.all([queue.add(name, 'ping', { n: 1 }, { jobId: 'job-a' }), queue.add(name, 'ping', { n: 2 }, { jobId: 'job-a' })]);
    await queue.add(name, 'ping', { n: 3 }, { jobId: 'job-a' });
    const runs = await consume(queue, name);
    await waitFor('the job to complete', async () => (await queue.getJob(name, 'job-a'))?.status === 'completed');
    await queue.add(name, 'ping', { n: 4 }, { jobId: 'job-a' });
    await sleep(300);
    expect(runs.map((run) => [run.id, run.name, run.attempt])).toEqual([['job-a', 'ping', 1]]);
    expect([{ n: 1 }, { n: 2 }]).toContainEqual(runs[0]!.data);
  });

  it('adds many jobs at once in their order, each deduplicated by its id and keeping its own options', async () => {
    const queue = track(open());
    const name = freshQueueName();
    await queue.add(name, 'ping', { n: -1 }, { jobId: 'bulk-3' });
    const ids = Array.from({ length: 30 }, (_, i) => `bulk-${i}`);
    await queue.addMany(name, ids.map((jobId, i) => ({ name: 'ping', data: { n: i }, options: { jobId, attempts: 2, backoffMs: 50, delayMs: i === 29 ? 400 : 0 } })));
    await queue.addMany(name, [{ name: 'ping', data: { n: 99 }, options: { jobId: 'bulk-0' } }]);
    const runs = await consume(queue, name, async (job) => {
      if (job.id === 'bulk-1' && job.attempt === 1) throw new Error('once');
    });
    await waitFor('every job to run, bulk-1 twice', () => new Set(runs.map((run) => run.id)).size >= ids.length && runs.filter((run) => run.id === 'bulk-1').length === 2);
    await sleep(200);
    const firstRuns = runs.filter((run) => run.attempt === 1);
    // One consumer at a time: jobs due together run in the order they were added; the delayed one runs last.
    expect(firstRuns.map((run) => run.id)).toEqual(['bulk-3', ...ids.filter((id) => id !== 'bulk-3')]);
    expect(firstRuns.find((run) => run.id === 'bulk-0')!.data).toEqual({ n: 0 });
    expect(firstRuns.find((run) => run.id === 'bulk-3')!.data).toEqual({ n: -1 });
    expect(runs.filter((run) => run.id === 'bulk-1').map((run) => run.attempt)).toEqual([1, 2]);
    await expect(queue.addMany(name, [{ name: 'bad', data: null, options: { jobId: 'a:b' } }])).rejects.toThrow(/Invalid job id/);
  });

  it('retries a failing handler with exponential backoff until it succeeds', async () => {
    const queue = track(open());
    const name = freshQueueName();
    const runs = await consume(queue, name, async (job) => {
      if (job.attempt < 3) throw new Error(`not yet (${job.attempt})`);
    });
    await queue.add(name, 'flaky', null, { jobId: 'flaky-1', attempts: 5, backoffMs: 150 });
    const info = await waitFor('the job to complete', async () => {
      const job = await queue.getJob(name, 'flaky-1');
      return job?.status === 'completed' ? job : null;
    });
    expect(runs.map((run) => run.attempt)).toEqual([1, 2, 3]);
    const [first, second, third] = runs.map((run) => run.at);
    // 150 ms after the first failure, 300 ms after the second (a few ms of slack for timer granularity).
    expect(second! - first!).toBeGreaterThanOrEqual(140);
    expect(third! - second!).toBeGreaterThanOrEqual(290);
    expect(info).toMatchObject({ attemptsStarted: 3, status: 'completed' });
  });

  it('gives up after `attempts` runs: the job is failed and keeps its last error', async () => {
    const queue = track(open());
    const name = freshQueueName();
    const runs = await consume(queue, name, async (job) => {
      throw new Error(`webhook answered 500 (run ${job.attempt})`);
    });
    await queue.add(name, 'doomed', { url: 'https://example.test' }, { jobId: 'doomed-1', attempts: 3, backoffMs: 20 });
    const info = await waitFor('the job to fail', async () => {
      const job = await queue.getJob(name, 'doomed-1');
      return job?.status === 'failed' ? job : null;
    });
    await sleep(300);
    expect(runs.map((run) => run.attempt)).toEqual([1, 2, 3]);
    expect(info).toEqual({ id: 'doomed-1', name: 'doomed', status: 'failed', attemptsStarted: 3, lastError: 'webhook answered 500 (run 3)' });
  });

  it('does not run a delayed job before its due time, and runs it after', async () => {
    const queue = track(open());
    const name = freshQueueName();
    const runs = await consume(queue, name);
    const addedAt = Date.now();
    await queue.add(name, 'timer', { offer: 'o1' }, { jobId: 'timer-1', delayMs: 700 });
    await sleep(400);
    expect(runs).toHaveLength(0);
    expect((await queue.getJob(name, 'timer-1'))?.status).toBe('waiting');
    await waitFor('the delayed job to run', () => runs.length === 1);
    expect(runs[0]!.at - addedAt).toBeGreaterThanOrEqual(690);
    expect(runs[0]!.at - addedAt).toBeLessThan(700 + 500);
  });

  it('keeps jobs across a restart: a new instance on the same storage runs each exactly once', async () => {
    const name = freshQueueName();
    const before = open();
    const ids = Array.from({ length: 25 }, (_, i) => `durable-${i}`);
    for (const [i, jobId] of ids.entries()) await before.add(name, 'work', { i }, { jobId, delayMs: i % 5 === 0 ? 200 : 0 });
    await before.close();

    const after = track(open());
    const runs = await consume(after, name, async () => {}, 4);
    await waitFor('every job to run', () => runs.length >= ids.length);
    await sleep(300);
    expect(runs.map((run) => run.id).sort()).toEqual([...ids].sort());
  });

  it('shares a queue between two consumers (two processes): every job runs exactly once', async () => {
    const name = freshQueueName();
    const [first, second] = [track(open()), track(open())];
    const runsA = await consume(first, name, () => sleep(2), 4);
    const runsB = await consume(second, name, () => sleep(2), 4);
    const ids = Array.from({ length: 120 }, (_, i) => `shared-${i}`);
    await Promise.all(ids.map((jobId, i) => (i % 2 ? first : second).add(name, 'work', null, { jobId })));
    await waitFor('every job to run', () => runsA.length + runsB.length >= ids.length, 10_000);
    await sleep(300);
    expect([...runsA, ...runsB].map((run) => run.id).sort()).toEqual([...ids].sort());
    expect({ first: runsA.length > 0, second: runsB.length > 0 }).toEqual({ first: true, second: true });
  });
});

describe('table queue crash recovery', () => {
  it('picks up again a job whose worker died while running it, once the lease expires', async () => {
    const { orm, logger } = harness;
    const name = freshQueueName();
    const queue = track(createTableQueue({ orm, logger, pollIntervalMs: 20 }));
    await queue.add(name, 'work', { n: 1 }, { jobId: 'orphan-1', attempts: 2 });
    // A worker in another process claims the job with an 800 ms lease, then dies: no renewal, no outcome.
    const claimed = await createQueueJobStore(orm).claim(name, 10, 800);
    const claimedAt = Date.now();
    expect(claimed.map((job) => [job.id, job.attempt])).toEqual([['orphan-1', 1]]);
    expect((await queue.getJob(name, 'orphan-1'))?.status).toBe('active');

    const runs = await consume(queue, name);
    await sleep(400);
    expect(runs).toHaveLength(0);
    await waitFor('the orphaned job to run again', () => runs.length === 1);
    expect(runs[0]!.at - claimedAt).toBeGreaterThanOrEqual(750);
    expect(runs[0]!.attempt).toBe(2);
    await waitFor('the job to complete', async () => (await queue.getJob(name, 'orphan-1'))?.status === 'completed');
  });
});
