import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.ts';
import { acknowledged, deactivationAudits, deliveriesOf, insertSubscription, subscribe, subscriptionRow } from '../support/webhook-fixtures.ts';
import { useWebhookHarness } from '../support/webhook-harness.ts';

const SECRET = randomBytes(32).toString('hex');

/** `*.nxdomain.test` does not exist; `*.flaky.test` meets a resolver failure (EAI_AGAIN); other names resolve as usual. */
const lookup: LookupFunction = (hostname, options, callback) => {
  const fail = (code: string) => callback(Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code }), '', 0);
  if (hostname.endsWith('.nxdomain.test')) return fail('ENOTFOUND');
  if (hostname.endsWith('.flaky.test')) return fail('EAI_AGAIN');
  dnsLookup(hostname, options, callback);
};

// Short enough that the hanging receiver's 8 timeouts play out in about 11 s; long enough that a first request (a TLS
// handshake with this process's own receiver) on a busy machine does not time out, which would record a retry where
// the tests expect one final attempt.
const harness = useWebhookHarness({ timeoutMs: 1000, lookup });

describe('webhook deactivation', () => {
  it('deactivates at once on 404, 410 and an unknown host (NXDOMAIN), audited and visible; a resolver failure is retried', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    hooks.reply = ({ path }) => ({ status: path === '/gone404' ? 404 : 410 });
    const gone404 = await subscribe(admin, hooks.url('/gone404'), ['job:create'], SECRET);
    const gone410 = await subscribe(admin, hooks.url('/gone410'), ['job:create'], SECRET);
    const nxdomain = await insertSubscription(harness.orm, harness.server.services.crypto, siteId, 'https://hooks.nxdomain.test/in', ['job:create'], SECRET);
    const flaky = await insertSubscription(harness.orm, harness.server.services.crypto, siteId, 'https://hooks.flaky.test/in', ['job:create'], SECRET);
    await harness.emit(siteId, 3);

    const expected = { [gone404]: 'http_404', [gone410]: 'http_410', [nxdomain]: 'unresolvable_host' };
    for (const [id, reason] of Object.entries(expected)) {
      await waitFor(`${reason} to deactivate`, async () => !(await subscriptionRow(harness.orm, siteId, id)).isActive, 5000);
      const rows = await deliveriesOf(harness.orm, siteId, id);
      expect(rows.length).toBeGreaterThan(0);
      // No retry: the one attempt per event (or its drop once the subscription was off) is final.
      expect(rows.every((row) => row.status === 'abandoned' && row.attempt === 1)).toBe(true);
      const audits = await deactivationAudits(harness.orm, siteId, id);
      expect(audits).toHaveLength(1);
      expect(audits[0]).toMatchObject({ userId: null, newData: { is_active: false, deactivation_reason: reason } });
      const shown = await admin.get<{ data: Record<string, unknown> }>(`/api/webhook?id=${id}`);
      expect(shown.body.data).toMatchObject({ is_active: false, deactivation_reason: reason, deactivated_at: expect.any(String) });
    }
    expect(hooks.received.length).toBeLessThanOrEqual(6);
    await waitFor('the resolver failures to be retried', async () => (await deliveriesOf(harness.orm, siteId, flaky)).filter((r) => r.status === 'failed').length >= 3);
    const retried = await deliveriesOf(harness.orm, siteId, flaky);
    expect(retried.every((row) => row.error?.startsWith('EAI_AGAIN'))).toBe(true);
    expect(await deactivationAudits(harness.orm, siteId, flaky)).toHaveLength(0);
  });

  it('keeps retrying 500s and timeouts until the attempts run out, then deactivates and audits', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    hooks.reply = ({ path }) => (path === '/slow' ? 'hang' : { status: 500 });
    const failing = await subscribe(admin, hooks.url('/error'), ['job:create'], SECRET);
    const slow = await subscribe(admin, hooks.url('/slow'), ['job:create'], SECRET);
    await harness.emit(siteId, 1);

    // Each timeout takes a second, so after three of them the slow subscription has five attempts to go. (The 500s
    // run out fast; that they were all made before the switch-off is what the eight rows below show.)
    await waitFor('a few failed attempts', async () => (await deliveriesOf(harness.orm, siteId, slow)).length >= 3, 10_000);
    expect((await subscriptionRow(harness.orm, siteId, slow)).isActive).toBe(true);

    for (const [id, error] of [[failing, 'HTTP 500'], [slow, 'ETIMEDOUT']] as const) {
      await waitFor('the attempts to run out', async () => !(await subscriptionRow(harness.orm, siteId, id)).isActive, 25_000);
      const rows = await deliveriesOf(harness.orm, siteId, id);
      expect(rows.map((row) => row.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(rows.map((row) => row.status)).toEqual([...Array(7).fill('failed'), 'abandoned']);
      expect(rows.every((row) => row.error?.startsWith(error))).toBe(true);
      expect((await subscriptionRow(harness.orm, siteId, id)).deactivationReason).toBe('retries_exhausted');
      expect(await deactivationAudits(harness.orm, siteId, id)).toHaveLength(1);
    }
  }, 45_000);

  it('drops deliveries pending when a subscription is switched off, and does not replay them when it is switched back on', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    let healthy = false;
    // The 503's Retry-After holds the retry back (1.5 s, the test policy's ceiling) while the subscription goes off and on.
    hooks.reply = () => (healthy ? { status: 204 } : { status: 503, headers: { 'retry-after': '60' } });
    const id = await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    const [missed] = await harness.emit(siteId, 1);
    await waitFor('the first attempt', () => hooks.received.length >= 1);
    expect((await admin.put(`/api/webhook?id=${id}`, { is_active: false })).status).toBe(200);
    expect((await admin.put(`/api/webhook?id=${id}`, { is_active: true })).status).toBe(200);
    healthy = true;

    await waitFor('the pending retry to be dropped', async () => (await deliveriesOf(harness.orm, siteId, id)).some((r) => r.status === 'abandoned'), 5000);
    expect(acknowledged(hooks.received).has(missed!)).toBe(false);
    const [next] = await harness.emit(siteId, 1);
    await waitFor('a new event to arrive', () => acknowledged(hooks.received).has(next!));
    expect(acknowledged(hooks.received)).toEqual(new Set([next]));
  });
});
