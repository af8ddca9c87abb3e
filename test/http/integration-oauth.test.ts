import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { useTwoSites } from '../support/two-sites.ts';

/**
 * The end of an OAuth connect: the provider sends the admin's browser to GET /api/integration/callback with the
 * signed state and a code, which is traded for the account's tokens at the provider's token URL (here a local
 * provider, OAUTH_TOKEN_URLS being for tests only).
 */
type Exchange = Record<string, string>;
const exchanges: Exchange[] = [];
let provider: Server;

/** A token endpoint answering as Slack's does: `ok` with a team for the code `good`, `ok: false` otherwise. */
async function startProvider(): Promise<string> {
  provider = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      exchanges.push(form);
      res.setHeader('content-type', 'application/json');
      // `slow` takes 300 ms to answer (room for a callback to arrive twice meanwhile).
      const granted = (form.code === 'good' || form.code === 'slow') && form.client_secret === 'slack-secret-planted-31';
      const answer = granted ? { ok: true, access_token: 'xoxb-planted-token', team: { id: 'T0042', name: 'Acme' } } : { ok: false, error: 'invalid_code' };
      setTimeout(() => res.end(JSON.stringify(answer)), form.code === 'slow' ? 300 : 0);
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(provider.address() as AddressInfo).port}/oauth.v2.access`;
}

const PUBLIC_URL = 'http://{site}.dispatch.test:4321';
const sites = useTwoSites(async () => ({ OAUTH_TOKEN_URLS: JSON.stringify({ slack: await startProvider() }), PUBLIC_URL }));
afterAll(() => new Promise((resolve) => provider.close(resolve)));

type Integration = { integration_key: string; is_active: boolean; status: string; config: Record<string, unknown> };
type Connected = { data: { integration_data: Integration; provider_response: { connect_url: string } } };

/** Starts a Slack connect on acme; the state and redirect URI its authorization URL carries. */
async function connect(redirectUrl?: string): Promise<{ state: string; redirectUri: string }> {
  const body = { integration_key: 'slack', config: { client_id: 'slack-client', client_secret: 'slack-secret-planted-31' }, ...(redirectUrl ? { redirect_url: redirectUrl } : {}) };
  const answer = await sites.acme.as.admin.post<Connected>('/api/integration/connect', body);
  expect(answer.body.data.integration_data.status).toBe('pending_authorization');
  const url = new URL(answer.body.data.provider_response.connect_url);
  return { state: url.searchParams.get('state')!, redirectUri: url.searchParams.get('redirect_uri')! };
}

const callback = (site: 'acme' | 'globex', query: Record<string, string>) =>
  sites.server.client(site).get<Record<string, unknown>>(`/api/integration/callback?${new URLSearchParams(query)}`);
const slack = async () => (await sites.acme.as.admin.get<{ data: Integration[] }>('/api/integration?integration_key=slack')).body.data[0]!;

describe('the OAuth callback', () => {
  it('trades the code for the account, connects and activates the provider, and sends the browser back', async () => {
    const { state, redirectUri } = await connect('https://console.acme.example/integrations');
    // The site's public origin (PUBLIC_URL), not the address this test server happens to listen on.
    expect(redirectUri).toBe('http://acme.dispatch.test:4321/api/integration/callback');
    const answer = await callback('acme', { state, code: 'good' });
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe('https://console.acme.example/integrations?integration_key=slack&status=connected');
    expect(exchanges.at(-1)).toEqual({ grant_type: 'authorization_code', code: 'good', redirect_uri: redirectUri, client_id: 'slack-client', client_secret: 'slack-secret-planted-31' });
    const connected = await slack();
    expect(connected).toMatchObject({ is_active: true, status: 'connected', config: { account_id: 'T0042', has_access_token: true } });
    expect(JSON.stringify(connected)).not.toContain('xoxb-planted-token');
    // Audited as done by whoever connected (the admin key's service account here).
    type Audit = { action: string; user_id: string | null };
    const audit = async (action: string) => (await sites.acme.as.admin.get<{ data: Audit[] }>(`/api/audit/search?entity_type=Integration&action=${action}`)).body.data;
    const [connector] = (await audit('connect')).map((r) => r.user_id);
    expect(connector).toBeTruthy();
    expect((await audit('authorize')).map((r) => r.user_id)).toEqual([connector]);
    // A state works once: the integration no longer waits for an authorization.
    const replay = await callback('acme', { state, code: 'good' });
    expect([replay.status, replay.body.code]).toEqual([409, 'NOT_PENDING_AUTHORIZATION']);
  });

  it('trades a code once when the callback arrives twice during the exchange: the second is refused, the grant kept', async () => {
    const { state } = await connect();
    const before = exchanges.length;
    const answers = await Promise.all([callback('acme', { state, code: 'slow' }), callback('acme', { state, code: 'slow' })]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(exchanges.length - before).toBe(1);
    expect(await slack()).toMatchObject({ status: 'connected', is_active: true });
  });

  it('leaves the provider configured when the admin refuses or the code is refused, and says so', async () => {
    const denied = await connect();
    const refusal = await callback('acme', { state: denied.state, error: 'access_denied' });
    expect([refusal.status, refusal.body.code]).toEqual([422, 'AUTHORIZATION_DENIED']);
    expect(await slack()).toMatchObject({ status: 'configured' });

    const bad = await connect('https://console.acme.example/back');
    const failed = await callback('acme', { state: bad.state, code: 'stolen' });
    expect(failed.status).toBe(302);
    expect(failed.headers.location).toBe('https://console.acme.example/back?integration_key=slack&status=failed&error=AUTHORIZATION_FAILED');
    expect(await slack()).toMatchObject({ status: 'configured' });
  });

  it("refuses a state on another site's host, a forged one and none, changing nothing", async () => {
    const { state } = await connect();
    const elsewhere = await callback('globex', { state, code: 'good' });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([400, 'INVALID_CONNECT_STATE']);
    const forged = await callback('acme', { state: `${state.split('.')[0]}.AAAA`, code: 'good' });
    expect([forged.status, forged.body.code]).toEqual([400, 'INVALID_CONNECT_STATE']);
    expect((await callback('acme', { code: 'good' })).status).toBe(400);
    // Neither code nor error: refused before the state is claimed, so the integration still waits for one.
    expect((await callback('acme', { state })).status).toBe(400);
    expect(await slack()).toMatchObject({ status: 'pending_authorization' });
  });

  it('refuses at connect a redirect_url the callback could not carry back or parse, and sends the browser to the longest one', async () => {
    type Failure = { code: string; fields?: { field: string }[] };
    const before = await slack();
    const refusals = {
      'a port past 65535': 'https://console.acme.example:99999/done',
      'over 1024 characters': `https://console.acme.example/${'a'.repeat(1000)}`,
      'over 1024 characters once percent-encoded': `https://console.acme.example/${'é'.repeat(200)}`,
    };
    for (const [why, redirect_url] of Object.entries(refusals)) {
      const answer = await sites.acme.as.admin.post<Failure>('/api/integration/connect', { integration_key: 'slack', config: { client_id: 'changed' }, redirect_url });
      expect([answer.status, answer.body.code, answer.body.fields?.[0]?.field], why).toEqual([400, 'VALIDATION_FAILED', 'redirect_url']);
    }
    expect(await slack(), 'nothing saved').toEqual(before);

    // The longest accepted: its state still reaches the callback whole.
    const longest = `https://console.acme.example/back?x=${'a'.repeat(1024 - 36)}`;
    expect(new URL(longest).href).toBe(longest);
    const { state } = await connect(longest);
    const answer = await callback('acme', { state, code: 'good' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(302);
    expect(answer.headers.location).toBe(`${longest}&integration_key=slack&status=connected`);
  });
});
