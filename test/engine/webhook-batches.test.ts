import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createDeliveryClaims } from '../../engine/webhooks/delivery-claims.ts';
import { batchJobId, WEBHOOKS_QUEUE, type BatchEvent } from '../../engine/webhooks/delivery-job.ts';
import { webhookDeliveriesFor, type FanOutEvent } from '../../engine/webhooks/relay-fan-out.ts';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { sleep, waitFor } from '../support/wait-for.ts';
import { acknowledged, deliveriesOf, eventIdOf, subscribe, verifyRequest } from '../support/webhook-fixtures.ts';
import { useWebhookHarness } from '../support/webhook-harness.ts';
import type { ReceivedRequest } from '../support/webhook-receiver.ts';

const SECRET = randomBytes(32).toString('hex');
const harness = useWebhookHarness({ timeoutMs: 10_000 });

/** How many requests the receiver saw for each event id. */
function requestsById(received: ReceivedRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of received) counts.set(eventIdOf(request), (counts.get(eventIdOf(request)) ?? 0) + 1);
  return counts;
}

/** Batch events with these ids (for job ids). */
const batchEvents = (ids: string[]): BatchEvent[] => ids.map((event_id) => ({ event_id, event: 'job:create', body: '{}' }));

/** The test event refused by the receiver in the retry test. */
const isFailing = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { data: { n: number } }).data.n === 6;

describe('webhook delivery in batches (one queue job per relayed batch and subscription)', () => {
  it('runs a relayed batch as one job per subscription, each event its own signed POST and attempt record', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    const jobs = await subscribe(admin, hooks.url('/jobs'), ['job:create'], SECRET);
    const everything = await subscribe(admin, hooks.url('/all'), ['*'], SECRET);
    const ids = await harness.emit(siteId, 50);

    await waitFor('50 events acknowledged at both endpoints', () => hooks.received.filter((r) => r.status === 204).length >= 100, 20_000);
    for (const path of ['/jobs', '/all']) {
      const mine = hooks.received.filter((r) => r.path === path);
      expect(acknowledged(mine)).toEqual(new Set(ids));
      expect(mine.every((r) => verifyRequest(SECRET, r.headers, r.body).hex)).toBe(true);
    }
    for (const subscription of [jobs, everything]) {
      await waitFor('every attempt recorded', async () => (await deliveriesOf(harness.orm, siteId, subscription)).length >= 50);
      const rows = await deliveriesOf(harness.orm, siteId, subscription);
      expect(rows.map((row) => [row.eventId, row.attempt, row.status]).sort()).toEqual(ids.map((id) => [id, 1, 'succeeded']).sort());
    }
  }, 30_000);

  it('retries a failing event of a batch on its own: the other events of the batch are sent once', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    // The event with `n: 6` is refused twice (its first attempt, in the batch job, and its first retry).
    hooks.reply = ({ body }) => (isFailing(body) && hooks.received.filter((r) => isFailing(r.body)).length <= 2 ? { status: 503 } : { status: 204 });
    const subscription = await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    const ids = await harness.emit(siteId, 20);
    const failing = ids[6]!;

    await waitFor('every event acknowledged', () => acknowledged(hooks.received).size >= 20, 15_000);
    await waitFor('every success recorded', async () => (await deliveriesOf(harness.orm, siteId, subscription)).filter((r) => r.status === 'succeeded').length >= 20);
    await sleep(200);
    const counts = requestsById(hooks.received);
    const rows = await deliveriesOf(harness.orm, siteId, subscription);
    for (const id of ids) {
      const attempts = rows.filter((row) => row.eventId === id);
      expect(attempts.map((row) => row.attempt)).toEqual(attempts.map((_, index) => index + 1));
      expect(attempts.at(-1)!.status).toBe('succeeded');
      expect(counts.get(id)).toBe(attempts.length);
      expect(attempts).toHaveLength(id === failing ? 3 : 1);
    }
    expect(rows.filter((row) => row.eventId === failing).map((row) => row.status)).toEqual(['failed', 'failed', 'succeeded']);
  }, 30_000);

  it('drops the events of a batch still waiting for a POST slot once one of its deliveries deactivated the subscription', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    hooks.reply = () => ({ status: 410 });
    const subscription = await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    // One relayed batch of 150 events, more than the 64 POSTs this process sends at once.
    const ids = await harness.emit(siteId, 150);

    await waitFor('an attempt recorded for every event', async () => (await deliveriesOf(harness.orm, siteId, subscription)).length >= 150, 15_000);
    const rows = await deliveriesOf(harness.orm, siteId, subscription);
    expect(new Set(rows.map((row) => row.eventId))).toEqual(new Set(ids));
    expect(rows.every((row) => row.status === 'abandoned')).toBe(true);
    expect(hooks.received.length).toBeLessThanOrEqual(64);
    expect(rows.filter((row) => row.responseStatus === 410)).toHaveLength(hooks.received.length);
    expect(rows.filter((row) => row.error?.startsWith('dropped:'))).toHaveLength(150 - hooks.received.length);
    const row = await inTenantScope(harness.orm, { siteId }, (em) =>
      em.execute<{ is_active: boolean; deactivation_reason: string }[]>('select is_active, deactivation_reason from webhook_subscription where id = ?', [subscription]),
    );
    expect(row[0]).toEqual({ is_active: false, deactivation_reason: 'http_410' });
  }, 30_000);

  it('gives a batch relayed again with an event between the same first and last events a job of its own', () => {
    // Event 2 committed after a relay took 1 and 3 and failed before its commit: the second relay's job must be added.
    expect(batchJobId('whk_1', batchEvents(['obx_1', 'obx_2', 'obx_3']))).not.toBe(batchJobId('whk_1', batchEvents(['obx_1', 'obx_3'])));
    expect(batchJobId('whk_1', batchEvents(['obx_1', 'obx_3']))).toBe(batchJobId('whk_1', batchEvents(['obx_1', 'obx_3'])));
    expect(batchJobId('whk_2', batchEvents(['obx_1', 'obx_3']))).not.toBe(batchJobId('whk_1', batchEvents(['obx_1', 'obx_3'])));
  });

  it('sends each event once when a batch is relayed again with other rows (a relay that died before its commit)', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    const subscription = await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    const events: FanOutEvent[] = Array.from({ length: 30 }, (_, n) => ({
      id: newId('outbox'), site_id: siteId, event: 'job:create', payload: { event: 'job:create', timestamp: new Date().toISOString(), data: { n } },
    }));
    // The first pass relayed 20 rows and died; the next one found 10 more committed: 20 events are in both jobs.
    const fanOut = (batch: FanOutEvent[]) => webhookDeliveriesFor(batch, (site) => (site === siteId ? [{ id: subscription, events: ['job:create'] }] : []));
    const [first, again, same] = [fanOut(events.slice(0, 20)), fanOut(events), fanOut(events.slice(0, 20))];
    expect([first.length, again.length]).toEqual([1, 1]);
    expect(first[0]!.options.jobId).not.toBe(again[0]!.options.jobId);
    expect(same[0]!.options.jobId).toBe(first[0]!.options.jobId);
    const queue = harness.server.services.queue;
    await Promise.all([queue.addMany(WEBHOOKS_QUEUE, first), queue.addMany(WEBHOOKS_QUEUE, again), queue.addMany(WEBHOOKS_QUEUE, same)]);

    await waitFor('30 events acknowledged', () => acknowledged(hooks.received).size >= 30, 15_000);
    await waitFor('30 successes recorded', async () => (await deliveriesOf(harness.orm, siteId, subscription)).length >= 30);
    await sleep(500);
    const counts = requestsById(hooks.received);
    expect([...counts.keys()].sort()).toEqual(events.map((event) => event.id).sort());
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(await deliveriesOf(harness.orm, siteId, subscription)).toHaveLength(30);
  }, 30_000);
});

describe('delivery claims', () => {
  it('give each event to the first job that claims it, and again to that job on a rerun', async () => {
    const claims = createDeliveryClaims(harness.server.services.redis, `${harness.server.services.config.redisPrefix}:claims-test`);
    const subscription = newId('webhook');
    const [a, b, c] = [newId('outbox'), newId('outbox'), newId('outbox')];
    expect(await claims('job-1', subscription, [a, b])).toEqual(new Set([a, b]));
    expect(await claims('job-2', subscription, [a, b, c])).toEqual(new Set([c]));
    expect(await claims('job-1', subscription, [a, b])).toEqual(new Set([a, b]));
    // Another subscription's deliveries of the same events are claims of their own.
    expect(await claims('job-3', newId('webhook'), [a, b, c])).toEqual(new Set([a, b, c]));
  });

  it('are not needed on the table queue, whose jobs commit with the relay: a job owns every event it carries', async () => {
    const claims = createDeliveryClaims(null, 'unused');
    const ids = [newId('outbox'), newId('outbox')];
    expect(await claims('job-1', newId('webhook'), ids)).toEqual(new Set(ids));
  });
});
