import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { driveToCompletion, openPayDesk, waitForEarning, type Earning } from '../support/earnings-fixtures.ts';
import { createSiteFixture } from '../support/fixtures.ts';
import { openLossyQueue, type LossyQueue } from '../support/lossy-queue.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { sleep, waitFor } from '../support/wait-for.ts';
import { acknowledged, deliveriesOf, emitEvents, eventIdOf, subscribe } from '../support/webhook-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const SECRET = randomBytes(32).toString('hex');
/** A retry 1.5 s after a failure: long enough to take its job out of Redis before it runs. */
const SLOW_RETRY = { maxAttempts: 5, baseDelayMs: 1500, maxDelayMs: 1500, jitter: 0 };

let server: TestServer;
let lossy: LossyQueue;
const receivers: WebhookReceiver[] = [];
let sites = 0;

beforeAll(async () => {
  server = await startTestServer({ WEBHOOK_ALLOW_LOOPBACK: 'true', RATE_LIMIT_POINTS: '100000' });
  // Only this file's relay and sweeper (on their own Redis prefix) may move this database's events.
  await server.services.outboxRelay.stop();
  await server.services.queueSweeper?.stop();
}, 60_000);
afterEach(async () => {
  await lossy.close();
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  // A test that failed half way leaves hand-offs and due retries whose jobs the next test's queue never had.
  await inTenantScope(server.services.db.orm, { siteId: null, platform: true }, (em) =>
    em.execute('delete from outbox_handoff; update webhook_delivery set retry_due_at = null where retry_due_at is not null'));
});
afterAll(() => server.close());

/** A new site with a receiver subscribed to all its events. */
async function subscribedSite() {
  const fixture = await createSiteFixture(server, `lost${++sites}`);
  const receiver = await startWebhookReceiver();
  receivers.push(receiver);
  const subscriptionId = await subscribe(fixture.as.admin, receiver.url(), ['*'], SECRET);
  return { fixture, receiver, subscriptionId };
}

async function siteEvents(siteId: string): Promise<string[]> {
  const rows = await inTenantScope(server.services.db.orm, { siteId }, (em) => em.execute<{ id: string }[]>('select id from outbox order by seq'));
  return rows.map((row) => row.id);
}

/** How many requests the receiver got for each event id. */
function requestsById(receiver: WebhookReceiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of receiver.received) counts.set(eventIdOf(request), (counts.get(eventIdOf(request)) ?? 0) + 1);
  return counts;
}

describe('Redis losing its data (BullMQ)', () => {
  it('delivers every relayed event once and records the earning, after Redis lost the jobs before they ran', async () => {
    lossy = openLossyQueue(server, SLOW_RETRY);
    const { fixture, receiver } = await subscribedSite();
    const rule = await fixture.as.admin.post('/api/earnings/rule', { name: 'Standard', components: [{ type: 'base', rate: 4 }] });
    expect(rule.status).toBe(201);
    const jobId = await driveToCompletion(await openPayDesk(server, fixture, `lost${sites}`));
    expect(await lossy.relay.relayOnce()).toBeGreaterThan(0);
    const events = await siteEvents(fixture.site.id);

    await lossy.loseRedisData();
    await lossy.startConsumers();
    await sleep(500);
    expect(receiver.received).toHaveLength(0);

    expect((await lossy.sweeper.sweepOnce()).jobsAddedAgain).toBeGreaterThan(0);
    await waitFor(`all ${events.length} events delivered`, () => events.every((id) => acknowledged(receiver.received).has(id)), 15_000);
    const earning = await waitForEarning(fixture.as.dispatcher, jobId);

    // Redis loses the jobs again, now finished: run again, they send and record nothing twice.
    await lossy.loseRedisData();
    expect((await lossy.sweeper.sweepOnce()).jobsAddedAgain).toBeGreaterThan(0);
    await waitFor('the jobs added again to finish', async () => (await lossy.sweeper.sweepOnce()).handoffsFinished > 0, 10_000);
    await sleep(300);
    expect([...requestsById(receiver).entries()]).toEqual(events.map((id) => [id, 1]));
    const earnings = await fixture.as.dispatcher.get<{ data: Earning[] }>(`/api/earnings/search?job_id=${jobId}`);
    expect(earnings.body.data.map((e) => e.id)).toEqual([earning.id]);
    expect((await lossy.sweeper.sweepOnce()).handoffsChecked).toBe(0);
  }, 60_000);

  it('sends a failed delivery\'s retry once, after Redis lost its delayed job', async () => {
    lossy = openLossyQueue(server, SLOW_RETRY);
    const { fixture, receiver, subscriptionId } = await subscribedSite();
    await lossy.startConsumers();
    const [eventId] = await emitEvents(server.services.db.orm, fixture.site.id, 1);
    let failed = false;
    receiver.reply = ({ headers }) => ({ status: headers['webhook-id'] === eventId && !failed ? ((failed = true), 503) : 204 });
    await lossy.relay.relayOnce();
    const attemptsOf = async () => (await deliveriesOf(server.services.db.orm, fixture.site.id, subscriptionId)).filter((d) => d.eventId === eventId);
    await waitFor('the first attempt to fail', async () => (await attemptsOf()).length > 0, 10_000);
    await lossy.loseRedisData();
    await sleep(2000);
    // The retry was due 1.5 s after the failure: gone with Redis, it never ran.
    expect(receiver.received.filter((r) => eventIdOf(r) === eventId)).toHaveLength(1);

    expect((await lossy.sweeper.sweepOnce()).retriesAddedAgain).toBe(1);
    await waitFor('the retry to be acknowledged', () => acknowledged(receiver.received).has(eventId!), 10_000);
    await sleep(300);
    expect((await lossy.sweeper.sweepOnce()).retriesAddedAgain).toBe(0);
    await sleep(300);
    expect(receiver.received.filter((r) => eventIdOf(r) === eventId).map((r) => r.status)).toEqual([503, 204]);
    expect((await attemptsOf()).map((a) => [a.attempt, a.status])).toEqual([[1, 'failed'], [2, 'succeeded']]);
  }, 30_000);

  it('adds nothing twice when it sweeps while Redis still has the jobs', async () => {
    lossy = openLossyQueue(server, SLOW_RETRY);
    const { fixture, receiver, subscriptionId } = await subscribedSite();
    receiver.reply = ({ count }) => ({ status: count === 1 ? 503 : 204 });
    await emitEvents(server.services.db.orm, fixture.site.id, 5);
    await lossy.relay.relayOnce();
    const events = await siteEvents(fixture.site.id);
    const early = await lossy.sweeper.sweepOnce();
    expect(early.handoffsChecked).toBeGreaterThan(0);
    expect(early.jobsAddedAgain).toBe(0);

    await lossy.startConsumers();
    await waitFor('a first attempt to fail', async () => (await deliveriesOf(server.services.db.orm, fixture.site.id, subscriptionId)).some((d) => d.status === 'failed'), 10_000);
    // The retry stays queued in Redis past its due time while no consumer runs; the sweeps find it there.
    await lossy.stopConsumers();
    await sleep(1800);
    expect((await lossy.sweeper.sweepOnce()).retriesAddedAgain).toBe(0);
    await lossy.startConsumers();
    await waitFor('every event acknowledged', () => events.every((id) => acknowledged(receiver.received).has(id)), 15_000);
    await sleep(300);
    expect(await lossy.sweeper.sweepOnce()).toMatchObject({ jobsAddedAgain: 0, retriesAddedAgain: 0 });
    await sleep(300);
    const counts = requestsById(receiver);
    // One event failed once and was retried once; every other event was sent exactly once.
    expect([...counts.keys()].sort()).toEqual([...events].sort());
    expect([...counts.values()].sort()).toEqual([...events.slice(1).map(() => 1), 2]);
    expect((await lossy.sweeper.sweepOnce()).handoffsChecked).toBe(0);
  }, 30_000);
});
