import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EVENTS_QUEUE } from '../../engine/outbox/outbox-relay.ts';
import { newId } from '../../persistence/ids.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { waitFor } from '../support/wait-for.ts';
import { acknowledged, deliveriesOf, eventIdOf, subscribe, subscriptionRow, verifyRequest } from '../support/webhook-fixtures.ts';
import { useWebhookHarness } from '../support/webhook-harness.ts';

const SECRET = randomBytes(32).toString('hex');
// Nothing here hangs: the timeout only has to outlast a burst of concurrent requests to this process's own receiver
// on a busy machine (webhook-deactivation.test.ts tests timeouts).
const harness = useWebhookHarness({ timeoutMs: 10_000 });

describe('webhook delivery', () => {
  it('delivers 1,000 events once each, verifiable by the hex signature and by a Standard Webhooks library; a one-byte change fails both', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    const all = await subscribe(admin, hooks.url('/jobs'), ['job:*'], SECRET);
    await subscribe(admin, hooks.url('/stops'), ['stop:state_change'], SECRET);
    const ids = await harness.emit(siteId, 1000);

    await waitFor('1,000 events acknowledged', () => acknowledged(hooks.received).size >= 1000, 30_000);
    expect(hooks.received.every((r) => r.path === '/jobs')).toBe(true);
    // A request slower than the client's timeout on this loaded machine is sent again: same id, same bytes.
    expect(acknowledged(hooks.received)).toEqual(new Set(ids));
    const bodyById = new Map<string, Buffer>();
    for (const request of hooks.received) {
      const body = JSON.parse(request.body.toString('utf8')) as { id: string; event: string; timestamp: string; data: { note: string } };
      expect(body).toMatchObject({ id: eventIdOf(request), event: 'job:create', data: { note: 'héllo ✓' } });
      expect(verifyRequest(SECRET, request.headers, request.body)).toEqual({ hex: true, standard: true });
      expect(bodyById.get(eventIdOf(request)) ?? request.body).toEqual(request.body);
      bodyById.set(eventIdOf(request), request.body);
      const tampered = Buffer.from(request.body);
      const at = Math.floor(Math.random() * tampered.length);
      tampered[at] = tampered[at]! ^ 0x01;
      expect(verifyRequest(SECRET, request.headers, tampered)).toEqual({ hex: false, standard: false });
    }
    // The receiver acknowledges before the sender records the attempt.
    const succeeded = async () => (await deliveriesOf(harness.orm, siteId, all)).filter((row) => row.status === 'succeeded');
    await waitFor('1,000 successes recorded', async () => (await succeeded()).length >= 1000);
    expect(new Set((await succeeded()).map((row) => row.eventId))).toEqual(new Set(ids));
    expect(await succeeded()).toHaveLength(1000);
  }, 45_000);

  it('loses nothing while the receiver answers 503 for a while: retries resend the same bytes under the same webhook-id', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    // The outage is the first 30 requests (not a time window, which a busy machine can outlast before the first delivery).
    hooks.reply = ({ count }) => (count <= 30 ? { status: 503 } : { status: 204 });
    const id = await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    const ids = await harness.emit(siteId, 100);

    await waitFor('every event acknowledged after the outage', () => acknowledged(hooks.received).size >= 100, 15_000);
    // The receiver acknowledges before the sender records the attempt.
    await waitFor('every success recorded', async () => (await deliveriesOf(harness.orm, siteId, id)).filter((r) => r.status === 'succeeded').length >= 100);
    expect(acknowledged(hooks.received)).toEqual(new Set(ids));
    expect(hooks.received.some((r) => r.status === 503)).toBe(true);
    const bodyById = new Map<string, string>();
    for (const request of hooks.received) {
      const body = request.body.toString('utf8');
      expect(JSON.parse(body).id).toBe(eventIdOf(request));
      expect(bodyById.get(eventIdOf(request)) ?? body).toBe(body);
      bodyById.set(eventIdOf(request), body);
    }
    const rows = await deliveriesOf(harness.orm, siteId, id);
    for (const eventId of ids) {
      const attempts = rows.filter((row) => row.eventId === eventId);
      expect(attempts.map((row) => row.attempt)).toEqual(attempts.map((_, index) => index + 1));
      expect(attempts.map((row) => row.status)).toEqual([...attempts.slice(1).map(() => 'failed'), 'succeeded']);
    }
    expect((await subscriptionRow(harness.orm, siteId, id)).isActive).toBe(true);
  });

  it('still delivers an event that an older version queued for fan-out (the legacy events queue), once', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    const id = newId('outbox');
    const data = { event: 'job:create', timestamp: new Date().toISOString(), data: { note: 'queued before the upgrade' }, outbox_id: id, site_id: siteId, entity_type: 'job', entity_id: 'job_legacy', entity_version: 1 };
    await harness.server.services.queue.add(EVENTS_QUEUE, 'job:create', data, { jobId: id, attempts: 12, backoffMs: 2000 });
    await waitFor('the legacy event', () => acknowledged(hooks.received).has(id), 10_000);
    expect(JSON.parse(hooks.received[0]!.body.toString('utf8'))).toMatchObject({ id, event: 'job:create', data: { note: 'queued before the upgrade' } });
    expect(hooks.received).toHaveLength(1);
  });

  it('waits as long as a Retry-After asks before the next attempt', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    hooks.reply = ({ count }) => (count === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 204 });
    await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    await harness.emit(siteId, 1);
    await waitFor('the retry', () => hooks.received.length >= 2, 5000);
    expect(hooks.received[1]!.at - hooks.received[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(hooks.received[1]!.status).toBe(204);
  });

  it('sends real job events: job:create and job:state_change carry the job', async () => {
    const { fixture, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    await subscribe(admin, hooks.url(), ['job:create', 'job:state_change'], SECRET);
    const job = await createJob(fixture.as.dispatcher);
    const states = await stateIds(fixture.as.dispatcher, 'job');
    expect((await fixture.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: states.dispatched })).status).toBe(200);

    await waitFor('both events', () => acknowledged(hooks.received).size >= 2, 5000);
    const bodies = hooks.received.map((r) => JSON.parse(r.body.toString('utf8')) as { event: string; data: { id: string } });
    expect(bodies.map((b) => b.event).sort()).toEqual(['job:create', 'job:state_change']);
    expect(bodies.every((b) => b.data.id === job.id)).toBe(true);
  });

  it('sends a job too large for a 1 MiB receiver as its scalar fields, marked truncated', async () => {
    const { fixture, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    const notes = 'n'.repeat(2000);
    const stops = Array.from({ length: 200 }, (_, i) => ({
      type: i === 0 ? 'pickup' : 'dropoff', street_address: `${i} Long Street`, city: 'Paris', point: { lat: 48.85 + i / 10_000, lng: 2.35 },
      customer_notes: notes, driver_notes: notes, internal_notes: notes,
    }));
    const job = await createJob(fixture.as.dispatcher, { stops });
    await waitFor('the job:create event', () => acknowledged(hooks.received).size >= 1, 10_000);
    const [request] = hooks.received;
    expect(request!.body.length).toBeLessThanOrEqual(1024 * 1024);
    expect(request!.status).toBe(204);
    const body = JSON.parse(request!.body.toString('utf8')) as { event: string; data: { id: string; truncated?: boolean; stops?: unknown } };
    expect(body).toMatchObject({ event: 'job:create', data: { id: job.id, truncated: true } });
    expect(body.data.stops).toBeUndefined();
  });

  it('gives up an event its receiver answers 413 to, and only that event: the subscription stays active', async () => {
    const { siteId, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    hooks.reply = ({ count }) => (count === 1 ? { status: 413 } : { status: 204 });
    const id = await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    await harness.emit(siteId, 2);
    await waitFor('both attempts recorded', async () => (await deliveriesOf(harness.orm, siteId, id)).length >= 2, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rows = await deliveriesOf(harness.orm, siteId, id);
    expect(rows.map((row) => row.status).sort()).toEqual(['abandoned', 'succeeded']);
    expect(hooks.received).toHaveLength(2);
    expect((await subscriptionRow(harness.orm, siteId, id)).isActive).toBe(true);
  });

  it('never sends a chat message, even to `*`: a room is private to its participants', async () => {
    const { fixture, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    await subscribe(admin, hooks.url(), ['*'], SECRET);
    const sent = await fixture.as.customer.post('/api/chat/message', { recipient_id: fixture.users.dispatcher.id, content: 'gate code 1234' });
    expect(sent.status).toBe(201);
    // An event written after the message: once it has arrived, the message would have too (events leave in order).
    const job = await createJob(fixture.as.dispatcher);
    await waitFor('the job event', () => hooks.received.some((r) => r.body.toString('utf8').includes(job.id)), 5000);
    expect(hooks.received.map((r) => (JSON.parse(r.body.toString('utf8')) as { event: string }).event)).toEqual(['job:create']);
    expect(hooks.received.some((r) => r.body.toString('utf8').includes('gate code'))).toBe(false);
  });

  it('subscribes by name to the route and dispatch events that `*` carries', async () => {
    const { admin } = await harness.freshSite();
    for (const event of ['route:create', 'route:update', 'dispatch:created', 'dispatch:updated']) {
      expect((await admin.post('/api/webhook', { url: (await harness.receiver()).url(), events: [event] })).status, event).toBe(201);
    }
    expect((await admin.post<{ code: string }>('/api/webhook', { url: (await harness.receiver()).url(), events: ['chat:message'] })).body.code).toBe('INVALID_WEBHOOK_EVENT');
  });

  it('POST /webhook/test pings one subscription at once, signed, even when it is inactive', async () => {
    const { siteId, fixture, admin } = await harness.freshSite();
    const hooks = await harness.receiver();
    const id = await subscribe(admin, hooks.url(), ['job:create'], SECRET);
    expect((await admin.put(`/api/webhook?id=${id}`, { is_active: false })).status).toBe(200);

    const response = await admin.post<{ data: { event_id: string; queued: boolean } }>(`/api/webhook/test?id=${id}`);
    expect(response.status).toBe(202);
    expect(response.body.data).toEqual({ event_id: expect.stringMatching(/^whp_/), queued: true });
    await waitFor('the ping', () => hooks.received.length >= 1);
    const [ping] = hooks.received;
    expect(JSON.parse(ping!.body.toString('utf8'))).toMatchObject({ id: response.body.data.event_id, event: 'webhook:ping', data: { webhook_id: id } });
    expect(verifyRequest(SECRET, ping!.headers, ping!.body)).toEqual({ hex: true, standard: true });
    await waitFor('the ping logged', async () => (await deliveriesOf(harness.orm, siteId, id)).some((r) => r.status === 'succeeded'));

    expect((await fixture.as.dispatcher.post(`/api/webhook/test?id=${id}`)).status).toBe(403);
    expect((await admin.post('/api/webhook/test?id=whk_missing')).status).toBe(404);
  });
});
