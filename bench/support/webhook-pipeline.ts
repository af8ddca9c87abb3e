import type { MikroORM } from '@mikro-orm/postgresql';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { WEBHOOKS_QUEUE } from '../../engine/webhooks/delivery-job.ts';
import { WebhookSubscriptionSchema } from '../../persistence/entities/webhook-subscription.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { newId } from '../../persistence/ids.ts';
import { insertAuditAndOutbox } from '../../persistence/outbox.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { percentiles, wallNow, type Percentiles } from './open-loop.ts';

export const BENCH_EVENT = 'job:create';

/** One active subscription to `job:create` with a secret (so every delivery is signed), written as the tests do. */
export async function insertSubscription(orm: MikroORM, crypto: FieldCrypto, siteId: string, url: string, secret: string): Promise<string> {
  const id = newId('webhook');
  const binding = { siteId, table: 'webhook_subscription', column: 'secret_ciphertext', rowId: id };
  await inTenantScope(orm, { siteId }, async (em) => {
    em.create(WebhookSubscriptionSchema, { id, siteId, url, events: [BENCH_EVENT], secretCiphertext: crypto.encrypt(secret, binding), isActive: true });
    await em.flush();
  });
  return id;
}

/**
 * Commits one outbox row per key in one tenant transaction, as the command path writes them (insertAuditAndOutbox),
 * each carrying `{key}` as its data; resolves with the commit time (wall clock, after COMMIT returned).
 */
export async function commitEvents(orm: MikroORM, siteId: string, keys: string[]): Promise<number> {
  const timestamp = new Date();
  const events = keys.map((key) => ({
    siteId, event: BENCH_EVENT, entityType: 'job', entityId: `job_${key.replace(':', '_')}`, entityVersion: 1, data: { key }, timestamp,
  }));
  await inTenantScope(orm, { siteId }, (em) => insertAuditAndOutbox(em, [], events));
  return wallNow();
}

/** Delivery attempts recorded for the site, by status. */
export async function deliveryCounts(orm: MikroORM, siteId: string): Promise<Record<string, number>> {
  const rows = await inTenantScope(orm, { siteId }, (em) =>
    em.execute<{ status: string; n: number }[]>('select status, count(*)::int as n from webhook_delivery group by status'),
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

export type Stages = Record<string, Percentiles>;
type Stamps = { timestamp: number; processedOn: number; finishedOn: number };
export type PipelineJobs = { webhooks: Map<string, Stamps> };

/**
 * The completed `webhooks` jobs (the relay adds them straight from the outbox, one per batch and subscription), with
 * BullMQ's own stamps by the bench key of each event they carried: `timestamp` when the job was built for `add`,
 * `processedOn` when a worker took it, `finishedOn` when its handler returned (after every event of the job).
 */
export async function completedJobs(redis: Redis, prefix: string): Promise<PipelineJobs> {
  const connection = redis.duplicate();
  try {
    const queue = new Queue(WEBHOOKS_QUEUE, { connection, prefix });
    const jobs = await queue.getJobs(['completed'], 0, -1);
    await queue.close();
    const webhooks = new Map<string, Stamps>();
    for (const job of jobs) {
      const data = job.data as { body?: string; events?: { body: string }[] };
      const bodies = data.events ? data.events.map((event) => event.body) : data.body ? [data.body] : [];
      for (const body of bodies) {
        const key = (JSON.parse(body) as { data?: { key?: string } }).data?.key;
        if (key) webhooks.set(key, { timestamp: job.timestamp, processedOn: job.processedOn ?? Number.NaN, finishedOn: job.finishedOn ?? Number.NaN });
      }
    }
    return { webhooks };
  } finally {
    await connection.quit();
  }
}

/** For a burst started at `startedAt`: seconds until the relay had added the last delivery job, the last POST started. */
export function burstEnds(jobs: PipelineJobs, keys: string[], startedAt: number) {
  const last = (values: number[]) => Math.round(Math.max(...values) - startedAt) / 1000;
  const deliveries = keys.map((key) => jobs.webhooks.get(key)!);
  return {
    relayAddedAllS: last(deliveries.map((d) => d.timestamp)),
    deliveriesStartedS: last(deliveries.map((d) => d.processedOn)),
  };
}

/** Where the latency of each of `keys` went: commit → relay add (fan-out included) → webhooks worker → receiver (and the recording after it). */
export function stageBreakdown(jobs: PipelineJobs, keys: string[], commits: Map<string, number>, arrivals: Map<string, number>): Stages {
  const segments: Record<string, number[]> = {
    'commit → relay add': [], 'webhooks queue wait': [], 'delivery run → receiver': [], '(receiver → recorded)': [],
  };
  for (const key of keys) {
    const job = jobs.webhooks.get(key);
    const commit = commits.get(key);
    const arrival = arrivals.get(key);
    if (!job || commit === undefined || arrival === undefined) continue;
    segments['commit → relay add']!.push(job.timestamp - commit);
    segments['webhooks queue wait']!.push(job.processedOn - job.timestamp);
    segments['delivery run → receiver']!.push(arrival - job.processedOn);
    segments['(receiver → recorded)']!.push(job.finishedOn - arrival);
  }
  return Object.fromEntries(Object.entries(segments).map(([name, values]) => [name, percentiles(values)]));
}
