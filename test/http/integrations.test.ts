import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeIntegration } from '../../engine/integrations/active-integration.ts';
import { ConnectStateSigner } from '../../engine/integrations/connect-state.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { type SiteFixture } from '../support/fixtures.ts';
import { ADMIN_URL } from '../support/postgres.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { useTwoSites } from '../support/two-sites.ts';

type ConfigField = { name: string; type: string; required: boolean; secret: boolean };
type Available = { key: string; category: string; features: { has_onboarding: boolean }; config_schema: ConfigField[]; is_default: boolean };
type SiteIntegration = { id: string; integration_key: string; category: string; config: Record<string, unknown>; is_active: boolean; status: string };
type ErrorBody = { code: string; fields?: { field: string }[] };

const SMTP_PASSWORD = 'planted-smtp-password-4c1d9e';
// Loopback allowed so the connect check reaches the local SMTP server (refused in production).
const sites = useTwoSites({ LOG_LEVEL: 'trace', WEBHOOK_ALLOW_LOOPBACK: 'true' });
let smtp: SmtpReceiver;

beforeAll(async () => {
  smtp = await startSmtpReceiver({ username: 'dispatch', password: SMTP_PASSWORD });
});
afterAll(() => smtp.close());

const smtpConfig = (password = SMTP_PASSWORD) => ({ host: '127.0.0.1', port: smtp.port, username: 'dispatch', password, from_address: 'dispatch@acme.example' });
const put = (site: SiteFixture, key: string, body: unknown) =>
  site.as.admin.put<{ data: SiteIntegration } & ErrorBody>(`/api/integration?integration_key=${key}`, body);

describe('integration catalog', () => {
  it('lists every category of the spec with its providers and config schemas, secret fields typed password', async () => {
    const response = await sites.acme.as.admin.get<{ data: Available[] }>('/api/integration/available');
    expect(response.status).toBe(200);
    const categories = new Set(response.body.data.map((p) => p.category));
    expect([...categories].sort()).toEqual(['ai', 'email', 'mapping', 'notification', 'payments', 'push', 'sms', 'streaming']);
    const byKey = Object.fromEntries(response.body.data.map((p) => [p.key, p]));
    expect(byKey.smtp!.config_schema.find((f) => f.name === 'password')).toMatchObject({ type: 'password', secret: true, required: false });
    expect(byKey.smtp!.config_schema.find((f) => f.name === 'host')).toMatchObject({ type: 'text', required: true, secret: false });
    expect(byKey.osrm!.config_schema.map((f) => [f.name, f.type])).toEqual([
      ['base_url', 'url'], ['timeout_ms', 'number'], ['api_key', 'password'], ['fallback', 'json'], ['offline', 'json'],
      ['profiles', 'json'], ['exclude_classes', 'json'], ['max_table_size', 'number'],
    ]);
    expect(byKey.slack!.features.has_onboarding).toBe(true);
    expect(byKey.mailbox!.is_default).toBe(true);
    expect(byKey.offline!.is_default).toBe(true);
    const paged = await sites.acme.as.admin.get<{ data: Available[]; meta: { total: number; page: number; per_page: number } }>('/api/integration/available?page_size=2&page=1');
    expect([paged.status, paged.body.data.length, paged.body.meta.page, paged.body.meta.per_page]).toEqual([200, 2, 1, 2]);
    expect(paged.body.meta.total).toBe(response.body.data.length);
    const sms = await sites.acme.as.admin.get<{ data: Available[] }>('/api/integration/available?category=sms');
    expect(sms.body.data.map((p) => p.key)).toEqual(['sms_outbox', 'twilio']);
  });

  it('is for admins only', async () => {
    expect((await sites.acme.as.dispatcher.get('/api/integration/available')).status).toBe(403);
    expect((await sites.acme.as.customer.get('/api/integration')).status).toBe(403);
  });
});

describe('site integration config', () => {
  it('is validated against the provider schema: 400 naming the field, and nothing is stored', async () => {
    const badPort = await put(sites.acme, 'twilio', { config: { account_sid: 'AC' + '0'.repeat(32), auth_token: 't', from_number: 'not a number' } });
    expect(badPort.status).toBe(400);
    expect(badPort.body).toMatchObject({ code: 'INVALID_INTEGRATION_CONFIG', fields: [{ field: 'config.from_number' }] });
    const missing = await put(sites.acme, 'twilio', { config: { account_sid: 'AC' + '0'.repeat(32), from_number: '+15551234567' } });
    expect(missing.body.fields).toEqual([expect.objectContaining({ field: 'config.auth_token' })]);
    const unknown = await put(sites.acme, 'twilio', { config: { account_sid: 'AC' + '0'.repeat(32), auth_token: 't', from_number: '+15551234567', colour: 'red' } });
    expect(unknown.body.fields).toEqual([expect.objectContaining({ field: 'config.colour' })]);
    const notInCatalog = await put(sites.acme, 'carrier-pigeon', { config: {} });
    expect(notInCatalog.status).toBe(404);
    expect((await sites.acme.as.admin.get<{ data: unknown[] }>('/api/integration?integration_key=twilio')).body.data).toEqual([]);
  });

  it('keeps a secret when omitted, replaces it when given, removes it with "" unless required', async () => {
    const created = await put(sites.acme, 'stripe', { config: { client_id: 'ca_1', secret_key: 'sk_test_first_value' } });
    expect(created.status).toBe(200);
    // The OAuth grant's secret fields show too, unset until an authorization completes.
    expect(created.body.data.config).toEqual({ client_id: 'ca_1', has_secret_key: true, has_access_token: false, has_refresh_token: false });
    const kept = await put(sites.acme, 'stripe', { config: { client_id: 'ca_2', has_secret_key: true } });
    expect(kept.body.data.config).toMatchObject({ client_id: 'ca_2', has_secret_key: true });
    const removeRequired = await put(sites.acme, 'stripe', { config: { secret_key: '' } });
    expect(removeRequired.status).toBe(400);
    expect(removeRequired.body.fields).toEqual([expect.objectContaining({ field: 'config.secret_key' })]);
    const full = await inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, async (em) => {
      await put(sites.acme, 'stripe', { config: { secret_key: 'sk_test_second_value' }, is_active: true });
      return activeIntegration(em, sites.server.services.crypto, sites.acme.site.id, 'payments');
    });
    expect(full).toMatchObject({ provider: 'stripe', config: { client_id: 'ca_2', secret_key: 'sk_test_second_value' } });
    await put(sites.acme, 'stripe', { is_active: false });
  });

  it('allows one active provider per category: activating another deactivates the previous, concurrently too', async () => {
    await put(sites.acme, 'osrm', { config: { base_url: 'https://osrm.example.com' } });
    await put(sites.acme, 'nominatim', { config: { base_url: 'https://nominatim.example.com' } });
    const keys = ['offline', 'osrm', 'nominatim'];
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => put(sites.acme, keys[i % 3]!, { is_active: true })));
    expect(results.map((r) => r.status)).toEqual(Array(9).fill(200));
    const mapping = await sites.acme.as.admin.get<{ data: SiteIntegration[] }>('/api/integration?category=mapping');
    expect(mapping.body.data).toHaveLength(3);
    expect(mapping.body.data.filter((i) => i.is_active)).toHaveLength(1);
    const deactivations = await sites.acme.as.admin.get<{ data: unknown[] }>('/api/audit/search?entity_type=Integration&action=update');
    expect(deactivations.body.data.length).toBeGreaterThanOrEqual(8);
  });

  it('gives server-side code the active mapping provider with its secret decrypted', async () => {
    const response = await put(sites.acme, 'osrm', { config: { base_url: 'https://osrm.example.com', api_key: 'osrm-key-planted-77' }, is_active: true });
    expect(response.body.data.config).toEqual({ base_url: 'https://osrm.example.com', timeout_ms: 5000, has_api_key: true });
    const resolved = await inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) =>
      activeIntegration(em, sites.server.services.crypto, sites.acme.site.id, 'mapping'),
    );
    expect(resolved).toMatchObject({ provider: 'osrm', config: { base_url: 'https://osrm.example.com', timeout_ms: 5000, api_key: 'osrm-key-planted-77' } });
    const none = await inTenantScope(sites.server.services.db.orm, { siteId: sites.globex.site.id }, (em) =>
      activeIntegration(em, sites.server.services.crypto, sites.globex.site.id, 'mapping'),
    );
    expect(none).toBeNull();
  });

  it("is the site's own: another site sees none of it and can delete none of it", async () => {
    expect((await sites.globex.as.admin.get<{ data: unknown[] }>('/api/integration')).body.data).toEqual([]);
    expect((await sites.globex.as.admin.send('DELETE', '/api/integration?integration_key=osrm')).status).toBe(404);
    expect((await sites.acme.as.admin.get<{ data: unknown[] }>('/api/integration?integration_key=osrm')).body.data).toHaveLength(1);
  });
});

describe('connect flow', () => {
  it('answers an OAuth provider with an authorization URL whose signed state names the site; a tampered state fails', async () => {
    const response = await sites.acme.as.admin.post<{ data: { integration_data: SiteIntegration; provider_response: { connect_url: string; redirect_url: string } } }>(
      '/api/integration/connect',
      { integration_key: 'slack', config: { client_id: 'slack-client', client_secret: 'slack-secret-planted-31' } },
    );
    expect(response.status).toBe(200);
    const { integration_data: integration, provider_response: provider } = response.body.data;
    expect(integration).toMatchObject({ integration_key: 'slack', is_active: false, status: 'pending_authorization' });
    const url = new URL(provider.connect_url);
    expect(url.origin + url.pathname).toBe('https://slack.com/oauth/v2/authorize');
    expect(url.searchParams.get('client_id')).toBe('slack-client');
    expect(url.searchParams.get('redirect_uri')).toBe(provider.redirect_url);
    const signer = new ConnectStateSigner(sites.server.services.config.secretKey);
    const state = url.searchParams.get('state')!;
    expect(signer.verify(state, sites.server.services.clock.now())).toMatchObject({ site_id: sites.acme.site.id, integration_id: integration.id });
    const [body, mac] = state.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), site_id: sites.globex.site.id })).toString('base64url');
    expect(() => signer.verify(`${forged}.${mac}`, sites.server.services.clock.now())).toThrow(/not a state this server signed/);
    expect(() => signer.verify(state, new Date(sites.server.services.clock.now().getTime() + 16 * 60_000))).toThrow(/expired/);
  });

  it('logs in to an SMTP server and activates it; a wrong password is 422 and leaves it inactive', async () => {
    const wrong = await sites.acme.as.admin.post<ErrorBody & { error: string }>('/api/integration/connect', { integration_key: 'smtp', config: smtpConfig('wrong-password') });
    expect(wrong.status).toBe(422);
    expect(wrong.body.code).toBe('INTEGRATION_CHECK_FAILED');
    expect((await sites.acme.as.admin.get<{ data: unknown[] }>('/api/integration?integration_key=smtp')).body.data).toEqual([]);
    const right = await sites.acme.as.admin.post<{ data: { integration_data: SiteIntegration; provider_response: { connect_url: null } } }>(
      '/api/integration/connect',
      { integration_key: 'smtp', config: smtpConfig() },
    );
    expect(right.status).toBe(200);
    expect(right.body.data.integration_data).toMatchObject({ is_active: true, status: 'connected', config: { has_password: true, port: smtp.port } });
    expect(right.body.data.provider_response.connect_url).toBeNull();
  });

  it('refuses an SMTP host on a private network (the platform must not dial its own network)', async () => {
    const response = await sites.acme.as.admin.post<ErrorBody>('/api/integration/connect', { integration_key: 'smtp', config: { ...smtpConfig(), host: '10.0.0.5' } });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('SMTP_HOST_NOT_ALLOWED');
  });
});

describe('integration secrets', () => {
  it('appear in no response, log line, audit record or database column in plain text', async () => {
    const planted = ['planted-smtp-password-4c1d9e', 'sk_test_second_value', 'osrm-key-planted-77', 'slack-secret-planted-31'];
    await put(sites.acme, 'smtp', { config: { from_name: 'Acme dispatch' } });
    const responses = [
      await sites.acme.as.admin.get('/api/integration'),
      await put(sites.acme, 'smtp', { config: { password: SMTP_PASSWORD } }),
      await sites.acme.as.admin.get('/api/audit/search?entity_type=Integration&per_page=100'),
    ];
    expect(responses[2]!.text).toContain('encrypted_fields');
    const url = new URL(ADMIN_URL);
    url.pathname = `/${sites.server.database}`;
    const { stdout: dump } = await promisify(execFile)('pg_dump', ['--data-only', url.toString()], { maxBuffer: 64 * 1024 * 1024 });
    expect(dump).toContain('dispatch@acme.example');
    const logs = sites.server.logs.join('');
    expect(logs).toContain('integration.update');
    for (const secret of planted) {
      for (const response of responses) expect(response.text).not.toContain(secret);
      expect(dump).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});
