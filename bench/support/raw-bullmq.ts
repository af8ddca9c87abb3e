import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { idle, openLoop, percentiles, wallNow, type OpenLoopResult, type Percentiles } from './open-loop.ts';

export type ThroughputResult = { jobs: number; seconds: number; perSecond: number };
export type LatencyResult = { loop: OpenLoopResult; latencyMs: Percentiles; lost: number };

/**
 * The baseline: a BullMQ Queue and Worker on the same Redis as the engine (connections duplicated from the app's
 * client, as engine/queue/bullmq-queue.ts does), a processor that does nothing but note the time, and the worker
 * concurrency of the webhook deliveries. Jobs are added with the engine's options (job id, attempts, retention).
 */
export function createRawBullmq(redis: Redis, prefix: string, concurrency: number) {
  const producer = redis.duplicate();
  const workerConnection = redis.duplicate({ maxRetriesPerRequest: null });
  const queue = new Queue<{ key: string }>('bench-noop', { connection: producer, prefix });
  const processed = new Map<string, number>();
  let notify = idle;
  const worker = new Worker<{ key: string }>(
    'bench-noop',
    async (job) => {
      processed.set(job.data.key, wallNow());
      notify();
    },
    { connection: workerConnection, prefix, concurrency, autorun: false },
  );
  let running = false;
  const add = (key: string) =>
    queue.add('noop', { key }, { jobId: `noop.${key.replace(':', '.')}`, attempts: 1, removeOnComplete: { age: 86_400 }, removeOnFail: { age: 604_800 } });
  const waitFor = (keys: string[], timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`raw BullMQ: jobs not processed after ${timeoutMs} ms`)), timeoutMs);
      notify = () => {
        if (!keys.every((key) => processed.has(key))) return;
        clearTimeout(timer);
        notify = idle;
        resolve();
      };
      notify();
    });

  return {
    /** Adds `count` jobs with the worker stopped, then starts it: jobs/s from the start to the last one processed. */
    async throughput(tag: string, count: number): Promise<ThroughputResult> {
      const keys = Array.from({ length: count }, (_, i) => `${tag}:${i}`);
      for (let i = 0; i < count; i += 200) await Promise.all(keys.slice(i, i + 200).map(add));
      const done = waitFor(keys, 120_000);
      const started = wallNow();
      if (!running) {
        running = true;
        void worker.run();
      }
      await done;
      const last = Math.max(...keys.map((key) => processed.get(key)!));
      return { jobs: count, seconds: (last - started) / 1000, perSecond: (count * 1000) / (last - started) };
    },
    /** Open loop at `rate` jobs/s for `seconds`: processed − added (stamped when `add` resolves). */
    async latency(tag: string, rate: number, seconds: number): Promise<LatencyResult> {
      const added = new Map<string, number>();
      const loop = await openLoop(rate, seconds, async (first, n) => {
        await Promise.all(Array.from({ length: n }, async (_, i) => {
          const key = `${tag}:${first + i}`;
          await add(key);
          added.set(key, wallNow());
        }));
      });
      const keys = [...added.keys()];
      await waitFor(keys, 60_000).catch(() => undefined);
      const lost = keys.filter((key) => !processed.has(key)).length;
      return { loop, latencyMs: percentiles(keys.filter((key) => processed.has(key)).map((key) => processed.get(key)! - added.get(key)!)), lost };
    },
    async close(): Promise<void> {
      await worker.close();
      await queue.close();
      await Promise.all([producer.quit(), workerConnection.quit()]);
    },
  };
}
