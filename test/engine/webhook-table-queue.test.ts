import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.ts';
import { acknowledged, deactivationAudits, deliveriesOf, subscribe, subscriptionRow, verifyRequest } from '../support/webhook-fixtures.ts';
import { useWebhookHarness } from '../support/webhook-harness.ts';

const SECRET = randomBytes(32).toString('hex');

// No Redis: the queues are the `queue_job` table, and a retry is written in the transaction that records the failure.
// Nothing here hangs, so the timeout only has to outlast a burst of concurrent first requests on a busy machine (a
// timed-out request to /gone would record a `failed` attempt before its 404).
const harness = useWebhookHarness({ timeoutMs: 10_000 }, { REDIS_URL: '' });

describe('webhook delivery on the table queue (no Redis)', () => {
  it('retries through an outage without losing an event, and deactivates a 404 at once', async () => {
    expect(harness.server.services.queue.backend).toBe('table');
    const { fixture, siteId } = await harness.freshSite();
    const { orm } = harness;
    const receiver = await harness.receiver();
    // The outage is the first 20 requests to /live (not a time window, which a busy machine can outlast before the first delivery).
    let liveRequests = 0;
    receiver.reply = ({ path }) => (path === '/gone' ? { status: 404 } : ++liveRequests <= 20 ? { status: 503 } : { status: 204 });
    const live = await subscribe(fixture.as.admin, receiver.url('/live'), ['job:*'], SECRET);
    const gone = await subscribe(fixture.as.admin, receiver.url('/gone'), ['*'], SECRET);
    const ids = await harness.emit(siteId, 50);

    await waitFor('every event acknowledged', () => acknowledged(receiver.received, '/live').size >= 50, 15_000);
    expect(acknowledged(receiver.received, '/live')).toEqual(new Set(ids));
    expect(receiver.received.every((r) => verifyRequest(SECRET, r.headers, r.body).hex)).toBe(true);
    await waitFor('every success recorded', async () => (await deliveriesOf(orm, siteId, live)).filter((r) => r.status === 'succeeded').length >= 50);
    expect((await deliveriesOf(orm, siteId, live)).some((r) => r.status === 'failed')).toBe(true);

    const off = await subscriptionRow(orm, siteId, gone);
    expect({ active: off.isActive, reason: off.deactivationReason }).toEqual({ active: false, reason: 'http_404' });
    expect(await deactivationAudits(orm, siteId, gone)).toHaveLength(1);
    expect((await deliveriesOf(orm, siteId, gone)).every((r) => r.status === 'abandoned')).toBe(true);
  });
});
