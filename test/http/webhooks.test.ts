import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDeliverySchema } from '../../persistence/entities/webhook-delivery.entity.ts';
import { WebhookSubscriptionSchema } from '../../persistence/entities/webhook-subscription.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { ADMIN_URL } from '../support/postgres.ts';
import { startTestServer } from '../support/test-server.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T> = { data: T };
type Many<T> = { data: T[]; meta: { pagination: { totalItems: number } } };
type Webhook = { id: string; url: string; events: string[]; is_active: boolean; has_secret: boolean; description: string | null; deactivated_at: string | null; deactivation_reason: string | null };
type ErrorBody = { code: string; fields?: { field: string; message: string }[]; details?: { reason?: string } };

const SECRET = 'a3f1c9e07b5d2846a3f1c9e07b5d2846a3f1c9e07b5d2846a3f1c9e07b5d2846';
const PUBLIC_URL = 'https://93.184.216.34/hooks/dispatch';

const sites = useTwoSites();

const create = (site: SiteFixture, body: Record<string, unknown>) => site.as.admin.post<One<Webhook>>('/api/webhook', body);
const subscription = (id: string) =>
  inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) => em.findOneOrFail(WebhookSubscriptionSchema, { id }));
const port = (s: Server) => (s.address() as { port: number }).port;
const reason = async (url: string) => (await sites.acme.as.admin.post<ErrorBody>('/api/webhook', { url, events: ['*'] })).body.details?.reason;
const decrypt = (id: string, stored: string) =>
  sites.server.services.crypto.decrypt(stored, { siteId: sites.acme.site.id, table: 'webhook_subscription', column: 'secret_ciphertext', rowId: id });

describe('webhook subscriptions', () => {
  it('creates and reads a subscription, returning has_secret and never the secret', async () => {
    const created = await create(sites.acme, { url: PUBLIC_URL, events: ['job:create', 'stop:*'], secret_key: SECRET, is_active: true });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: expect.stringMatching(/^whk_/), url: PUBLIC_URL, events: ['job:create', 'stop:*'], is_active: true, has_secret: true, deactivated_at: null });
    expect(Object.keys(created.body.data).sort()).toEqual(
      ['created_at', 'deactivated_at', 'deactivation_reason', 'description', 'events', 'has_secret', 'id', 'is_active', 'updated_at', 'url'],
    );
    const read = await sites.acme.as.admin.get<One<Webhook>>(`/api/webhook?id=${created.body.data.id}`);
    expect(read.body.data).toEqual(created.body.data);
    expect(created.text + read.text).not.toContain(SECRET);
  });

  it('keeps, replaces and removes the secret per the update rules, encrypted at rest and out of the audit', async () => {
    const { id } = (await create(sites.acme, { url: PUBLIC_URL, events: ['*'], secret_key: SECRET })).body.data;
    const stored = (await subscription(id)).secretCiphertext!;
    expect(stored).not.toContain(SECRET);
    expect(decrypt(id, stored)).toBe(SECRET);

    const kept = await sites.acme.as.admin.put<One<Webhook>>(`/api/webhook?id=${id}`, { description: 'ops' });
    expect(kept.body.data).toMatchObject({ has_secret: true, description: 'ops' });
    expect((await subscription(id)).secretCiphertext).toBe(stored);

    const rotated = 'rotated-secret-0123456789abcdef';
    expect((await sites.acme.as.admin.put<One<Webhook>>(`/api/webhook?id=${id}`, { secret_key: rotated })).body.data.has_secret).toBe(true);
    expect(decrypt(id, (await subscription(id)).secretCiphertext!)).toBe(rotated);

    const removed = await sites.acme.as.admin.put<One<Webhook>>(`/api/webhook?id=${id}`, { secret_key: '', description: null });
    expect(removed.body.data).toMatchObject({ has_secret: false, description: null });
    expect((await subscription(id)).secretCiphertext).toBeNull();

    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=Webhook&entity_id=${id}&page_size=100`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update', 'update', 'update']);
    expect(audit.text).toContain('signing_rotated');
    for (const secret of [SECRET, rotated, stored]) expect(audit.text).not.toContain(secret);

    const url = new URL(ADMIN_URL);
    url.pathname = `/${sites.server.database}`;
    const { stdout: dump } = await promisify(execFile)('pg_dump', ['--data-only', url.toString()], { maxBuffer: 64 * 1024 * 1024 });
    expect(dump).toContain(id);
    for (const secret of [SECRET, rotated]) {
      expect(dump).not.toContain(secret);
      expect(sites.server.logs.join('')).not.toContain(secret);
    }
  });

  it('removes the secret with secret_key null as with an empty string: an update\'s null clears the field', async () => {
    const { id } = (await create(sites.acme, { url: PUBLIC_URL, events: ['*'], secret_key: SECRET })).body.data;
    const cleared = await sites.acme.as.admin.put<One<Webhook>>(`/api/webhook?id=${id}`, { secret_key: null });
    expect([cleared.status, cleared.body.data?.has_secret]).toEqual([200, false]);
    expect((await subscription(id)).secretCiphertext).toBeNull();
  });

  it('refuses a secret shorter than 16 characters, naming secret_key', async () => {
    const response = await sites.acme.as.admin.post<ErrorBody>('/api/webhook', { url: PUBLIC_URL, events: ['*'], secret_key: 'short' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'WEBHOOK_SECRET_TOO_SHORT', fields: [{ field: 'secret_key' }] });
  });

  it('reactivates with is_active true, clearing the deactivation, and records a manual deactivation', async () => {
    const { id } = (await create(sites.acme, { url: PUBLIC_URL, events: ['job:state_change'] })).body.data;
    await inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, async (em) => {
      const row = await em.findOneOrFail(WebhookSubscriptionSchema, { id });
      Object.assign(row, { isActive: false, deactivatedAt: new Date(), deactivationReason: 'http_410' });
    });
    expect((await sites.acme.as.admin.get<One<Webhook>>(`/api/webhook?id=${id}`)).body.data).toMatchObject({ is_active: false, deactivation_reason: 'http_410' });
    const reactivated = await sites.acme.as.admin.put<One<Webhook>>(`/api/webhook?id=${id}`, { is_active: true });
    expect(reactivated.body.data).toMatchObject({ is_active: true, deactivated_at: null, deactivation_reason: null });
    const pausedFrom = sites.server.clock.now().getTime();
    const paused = await sites.acme.as.admin.put<One<Webhook>>(`/api/webhook?id=${id}`, { is_active: false });
    expect(paused.body.data).toMatchObject({ is_active: false, deactivation_reason: 'manual' });
    const pausedAt = Date.parse(paused.body.data.deactivated_at!);
    expect(pausedAt).toBeGreaterThanOrEqual(pausedFrom);
    expect(pausedAt).toBeLessThanOrEqual(sites.server.clock.now().getTime());
  });

  it('re-checks the URL when it changes, and canonicalises it', async () => {
    const { id } = (await create(sites.acme, { url: PUBLIC_URL, events: ['job:*'] })).body.data;
    const refused = await sites.acme.as.admin.put<ErrorBody>(`/api/webhook?id=${id}`, { url: 'https://10.0.0.8/hook' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'INVALID_WEBHOOK_URL', fields: [{ field: 'url' }], details: { reason: 'private' } });
    expect((await subscription(id)).url).toBe(PUBLIC_URL);
    const moved = await sites.acme.as.admin.put<One<Webhook>>(`/api/webhook?id=${id}`, { url: 'https://0x5db8d822/v2' });
    expect(moved.body.data.url).toBe('https://93.184.216.34/v2');
    expect((await sites.acme.as.admin.put(`/api/webhook?id=${id}`, { id, url: PUBLIC_URL })).status).toBe(400);
  });

  it('refuses unknown events and malformed filters, naming the entry', async () => {
    for (const [events, field] of [[['job:create', 'job:teleport'], 'events.1'], [['Job:Create'], 'events.0'], [['invoice:*'], 'events.0'], [['job:'], 'events.0'], [['**'], 'events.0']] as const) {
      const response = await sites.acme.as.admin.post<ErrorBody>('/api/webhook', { url: PUBLIC_URL, events });
      expect(response.status, JSON.stringify(events)).toBe(400);
      expect(response.body).toMatchObject({ code: 'INVALID_WEBHOOK_EVENT', fields: [{ field }] });
    }
    expect((await sites.acme.as.admin.post<ErrorBody>('/api/webhook', { url: PUBLIC_URL, events: [] })).body.code).toBe('VALIDATION_FAILED');
    const deduped = await create(sites.acme, { url: PUBLIC_URL, events: ['webhook:ping', 'route:state_change', 'webhook:ping'] });
    expect(deduped.body.data.events).toEqual(['webhook:ping', 'route:state_change']);
  });

  it('searches by URL text, activity and the event a subscription would receive', async () => {
    const exact = (await create(sites.globex, { url: 'https://93.184.216.34/search/exact', events: ['job:create'] })).body.data;
    const wildcard = (await create(sites.globex, { url: 'https://93.184.216.34/search/wild', events: ['job:*'], is_active: false })).body.data;
    const all = (await create(sites.globex, { url: 'https://93.184.216.34/search/all', events: ['*'] })).body.data;
    await create(sites.globex, { url: 'https://93.184.216.34/search/stops', events: ['stop:state_change'] });
    const ids = async (query: string) => (await sites.globex.as.admin.get<Many<Webhook>>(`/api/webhook/search?${query}`)).body.data.map((w) => w.id).sort();
    expect(await ids('event=job:create')).toEqual([exact.id, wildcard.id, all.id].sort());
    expect(await ids('event=job:create&is_active=true')).toEqual([exact.id, all.id].sort());
    expect(await ids('q=search/wild')).toEqual([wildcard.id]);
    expect((await ids('q=search')).length).toBe(4);
    expect((await sites.globex.as.admin.get<ErrorBody>('/api/webhook/search?event=job:explode')).body).toMatchObject({ code: 'INVALID_WEBHOOK_EVENT', fields: [{ field: 'event' }] });
  });

  it("lists a subscription's delivery attempts newest first, paged", async () => {
    const { id } = (await create(sites.acme, { url: PUBLIC_URL, events: ['job:create'] })).body.data;
    await inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, async (em) => {
      const eventId = newId('outbox');
      for (const [attempt, status, responseStatus] of [[1, 'failed', 503], [2, 'failed', null], [3, 'succeeded', 204]] as const) {
        em.create(WebhookDeliverySchema, {
          id: newId('webhookDelivery'), siteId: sites.acme.site.id, subscriptionId: id, eventId, event: 'job:create', attempt, status,
          responseStatus, durationMs: 40 * attempt, error: responseStatus === null ? 'ECONNRESET' : null, createdAt: new Date(Date.UTC(2030, 0, 1, 0, attempt)),
        });
      }
    });
    const page = await sites.acme.as.admin.get<Many<Record<string, unknown>>>(`/api/webhook/deliveries?id=${id}&page_size=2`);
    expect(page.status).toBe(200);
    expect(page.body.meta.pagination.totalItems).toBe(3);
    expect(page.body.data).toMatchObject([
      { attempt: 3, status: 'succeeded', response_status: 204, duration_ms: 120, event: 'job:create', error: null },
      { attempt: 2, status: 'failed', response_status: null, error: 'ECONNRESET' },
    ]);
    const last = await sites.acme.as.admin.get<Many<{ attempt: number }>>(`/api/webhook/deliveries?id=${id}&page_size=2&page=2`);
    expect(last.body.data.map((d) => d.attempt)).toEqual([1]);
    for (const sort of ['sort=created_at', 'sort_by=created_at&sort_order=asc']) {
      const oldestFirst = await sites.acme.as.admin.get<Many<{ attempt: number }>>(`/api/webhook/deliveries?id=${id}&${sort}`);
      expect(oldestFirst.body.data.map((d) => d.attempt)).toEqual([1, 2, 3]);
    }
    expect((await sites.acme.as.admin.get(`/api/webhook/deliveries?id=${id}&sort=-created_at`)).status).toBe(200);
    expect((await sites.acme.as.admin.get(`/api/webhook/deliveries?id=${id}&sort=url`)).status).toBe(400);
  });

  it('deletes a subscription with its delivery log, audited', async () => {
    const { id } = (await create(sites.acme, { url: PUBLIC_URL, events: ['job:delete'], secret_key: SECRET })).body.data;
    const deleted = await sites.acme.as.admin.send<One<{ id: string; deleted: boolean }>>('DELETE', `/api/webhook?id=${id}`);
    expect(deleted.body).toEqual({ data: { id, deleted: true } });
    expect((await sites.acme.as.admin.get(`/api/webhook?id=${id}`)).status).toBe(404);
    expect((await sites.acme.as.admin.send('DELETE', `/api/webhook?id=${id}`)).status).toBe(404);
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=Webhook&entity_id=${id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'delete']);
  });

  it("answers 404 for another site's subscription on every operation", async () => {
    const { id } = (await create(sites.globex, { url: PUBLIC_URL, events: ['*'] })).body.data;
    expect((await sites.acme.as.admin.get(`/api/webhook?id=${id}`)).status).toBe(404);
    expect((await sites.acme.as.admin.put(`/api/webhook?id=${id}`, { is_active: false })).status).toBe(404);
    expect((await sites.acme.as.admin.send('DELETE', `/api/webhook?id=${id}`)).status).toBe(404);
    expect((await sites.acme.as.admin.get(`/api/webhook/deliveries?id=${id}`)).status).toBe(404);
    expect((await sites.acme.as.admin.get<Many<Webhook>>('/api/webhook/search?page_size=100')).body.data.map((w) => w.id)).not.toContain(id);
    expect((await sites.globex.as.admin.get<One<Webhook>>(`/api/webhook?id=${id}`)).body.data.is_active).toBe(true);
  });

  it('is for admins only: dispatchers, drivers and customers get 403', async () => {
    for (const role of ['dispatcher', 'driver', 'customer'] as const) {
      expect((await sites.acme.as[role].post('/api/webhook', { url: PUBLIC_URL, events: ['*'] })).status).toBe(403);
      expect((await sites.acme.as[role].get('/api/webhook/search')).status).toBe(403);
    }
  });
});

describe('webhook URL safety', () => {
  let canary: Server;
  let canary6: Server | null = null;
  let connections = 0;

  beforeAll(async () => {
    canary = await listen('127.0.0.1', 0);
    canary6 = await listen('::1', port(canary)).catch(() => listen('::1', 0)).catch(() => null);
  });
  afterAll(async () => {
    await new Promise((resolve) => canary.close(resolve));
    if (canary6) await new Promise((resolve) => canary6!.close(resolve));
  });

  function listen(host: string, at: number): Promise<Server> {
    const socketServer = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    return new Promise((resolve, reject) => socketServer.once('error', reject).listen(at, host, () => resolve(socketServer)));
  }

  it('refuses 40+ loopback, private and disguised URL forms, and no connection reaches the canary', async () => {
    const p = port(canary);
    const p6 = canary6 ? port(canary6) : p;
    const forms = [
      `http://127.0.0.1:${p}/hook`, `ftp://127.0.0.1:${p}/`, `https://127.0.0.1:${p}/hook`, `https://2130706433:${p}/`, `https://0x7f000001:${p}/`,
      `https://127.1:${p}/`, `https://0177.0.0.1:${p}/`, `https://0x7f.0.0.1:${p}/`, `https://017700000001:${p}/`, `https://127.000.000.001:${p}/`,
      `https://127.0.0.1.:${p}/`, `https://127.255.255.254:${p}/`, `https://%31%32%37.0.0.1:${p}/`, `https://127\u30020\u30020\u30021:${p}/`,
      `https://\u2460\u2461\u2466.0.0.1:${p}/`, `https://[::1]:${p6}/`, `https://[0:0:0:0:0:0:0:1]:${p6}/`, `https://[::ffff:127.0.0.1]:${p}/`,
      `https://[::ffff:7f00:1]:${p}/`, `https://[0:0:0:0:0:ffff:7f00:1]:${p}/`, `https://[::127.0.0.1]:${p}/`, `https://[64:ff9b::127.0.0.1]:${p}/`,
      `https://[2002:7f00:1::1]:${p}/`, `https://[2001:0:4136:e378::1]:${p}/`, `https://localhost:${p}/`, `https://LOCALHOST:${p}/`,
      `https://localhost.:${p}/`, `https://hooks.localhost:${p}/`, `https://0.0.0.0:${p}/`, `https://0:${p}/`, `https://[::]:${p6}/`,
      `https://10.0.0.1:${p}/`, `https://172.16.0.1:${p}/`, `https://192.168.1.1:${p}/`, `https://169.254.169.254:${p}/latest/meta-data/`,
      `https://[::ffff:169.254.169.254]:${p}/`, `https://100.64.0.1:${p}/`, `https://[fd00::1]:${p6}/`, `https://[fe80::1]:${p6}/`,
      `https://[fec0::1]:${p6}/`, `https://224.0.0.1:${p}/`, `https://255.255.255.255:${p}/`, `https://192.0.2.1:${p}/`, `https://198.18.0.1:${p}/`,
      `https://[ff02::1]:${p6}/`, `https://user:pass@127.0.0.1:${p}/`, `https://93.184.216.34@127.0.0.1:${p}/`, `https://no-such-host.invalid:${p}/`,
    ];
    const host = hostname();
    const local = await lookup(host, { all: true }).catch(() => []);
    // This machine's own name resolves to loopback through /etc/hosts here: a real name-resolves-to-127.0.0.1 case.
    if (local.length > 0 && local.every((a) => a.address.startsWith('127.') || a.address === '::1')) forms.push(`https://${host}:${p}/`);
    expect(forms.length).toBeGreaterThanOrEqual(40);
    for (const url of forms) {
      const response = await sites.acme.as.admin.post<ErrorBody>('/api/webhook', { url, events: ['*'] });
      expect(response.status, url).toBe(400);
      expect(response.body, url).toMatchObject({ code: 'INVALID_WEBHOOK_URL', fields: [{ field: 'url' }], details: { reason: expect.any(String) } });
    }
    expect(connections).toBe(0);
    expect((await sites.acme.as.admin.get<Many<Webhook>>(`/api/webhook/search?q=${p}`)).body.data).toEqual([]);
  });

  it('says why: localhost by name and by address, the metadata endpoint, plain http, a host that does not resolve', async () => {
    expect(await reason('https://localhost/hook')).toBe('localhost_name');
    expect(await reason('https://127.0.0.1/hook')).toBe('loopback');
    expect(await reason('https://169.254.169.254/latest/meta-data/')).toBe('link_local');
    expect(await reason('http://93.184.216.34/hook')).toBe('not_https');
    expect(await reason('https://no-such-host.invalid/hook')).toBe('unresolvable');
  });
});

describe('WEBHOOK_ALLOW_LOOPBACK (tests only)', () => {
  it('lets loopback https receivers register, and still refuses names, plain http and private networks', async () => {
    const loopbackServer = await startTestServer({ WEBHOOK_ALLOW_LOOPBACK: 'true' });
    try {
      const site = await createSiteFixture(loopbackServer, 'loop');
      const post = (url: string) => site.as.admin.post<ErrorBody>('/api/webhook', { url, events: ['*'] });
      expect((await post('https://127.0.0.1:9443/hook')).status).toBe(201);
      expect((await post('https://[::1]:9443/hook')).status).toBe(201);
      expect((await post('http://127.0.0.1:9443/hook')).body.details?.reason).toBe('not_https');
      expect((await post('https://localhost:9443/hook')).body.details?.reason).toBe('localhost_name');
      expect((await post('https://10.0.0.1/hook')).body.details?.reason).toBe('private');
    } finally {
      await loopbackServer.close();
    }
  });
});
