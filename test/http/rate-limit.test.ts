import { describe, expect, it } from 'vitest';
import { connectSocket, refusalOf } from '../realtime/socket-client.ts';
import { useOneSite } from '../support/one-site.ts';
import { useTwoSites } from '../support/two-sites.ts';

const QUOTA = 25;

const MODES: { mode: string; env: Record<string, string> }[] = [
  { mode: 'Redis', env: {} },
  { mode: 'in process', env: { REDIS_URL: '' } },
];

describe.each(MODES)('rate limits ($mode)', ({ env }) => {
  const sites = useTwoSites({ RATE_LIMIT_POINTS: String(QUOTA), RATE_LIMIT_WINDOW_SECONDS: '60', ...env });

  it('lets exactly the quota through a burst of 3x on one key, and every 429 says when to retry', async () => {
    const responses = await Promise.all(Array.from({ length: QUOTA * 3 }, () => sites.acme.as.dispatcher.get('/api/auth/me')));
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(QUOTA);
    expect(limited).toHaveLength(QUOTA * 2);
    for (const response of limited) {
      expect(response.headers['retry-after']).toMatch(/^\d+$/);
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(response.headers['ratelimit-remaining']).toBe('0');
      expect(response.body).toMatchObject({ code: 'RATE_LIMITED' });
    }
    expect(ok[0]!.headers['ratelimit-limit']).toBe(String(QUOTA));
  });

  it('does not affect other keys of the site or other sites', async () => {
    expect((await sites.acme.as.admin.get('/api/auth/me')).status).toBe(200);
    expect((await sites.globex.as.dispatcher.get('/api/auth/me')).status).toBe(200);
  });
});

describe('anonymous quota behind a trusted proxy', () => {
  const ANONYMOUS_QUOTA = 5;
  const site = useOneSite({ TRUST_PROXY: 'true', RATE_LIMIT_POINTS: String(ANONYMOUS_QUOTA), RATE_LIMIT_WINDOW_SECONDS: '60' });

  function socketGuess(i: number) {
    return refusalOf(connectSocket(site.server.port, 'acme', '/driver', { token: `dsk_socketguess${i}`, headers: { 'x-forwarded-for': '198.51.100.30' } }));
  }

  function fromBehindProxy(forwardedFor: string) {
    return site.server.client('acme').as({ headers: { 'x-forwarded-for': forwardedFor } }).get('/api/branding');
  }

  it("counts the address the proxy saw (the rightmost X-Forwarded-For entry), whatever the client put before it", async () => {
    for (let i = 0; i < ANONYMOUS_QUOTA; i += 1) expect((await fromBehindProxy(`203.0.113.${i}, 198.51.100.7`)).status).toBe(200);
    const spoofed = await fromBehindProxy('203.0.113.99, 198.51.100.7');
    expect([spoofed.status, spoofed.body]).toEqual([429, expect.objectContaining({ code: 'RATE_LIMITED' })]);
    expect((await fromBehindProxy('203.0.113.0, 198.51.100.8')).status).toBe(200);
  });

  it('charges socket handshakes refused for an unknown key to their address too', async () => {
    for (let i = 0; i < ANONYMOUS_QUOTA; i += 1) expect(await socketGuess(i)).toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(await socketGuess(99)).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('charges requests refused for an unknown API key or site host to their address, so a flood of guesses meets 429', async () => {
    const address = { 'x-forwarded-for': '198.51.100.20' };
    const guessKey = (i: number) => site.server.client('acme').as({ apiKey: `dsk_guess${i}`, headers: address }).get('/api/auth/me');
    const guessSite = (i: number) => site.server.client(`ghost${i}`).as({ apiKey: `dsk_guess${i}`, headers: address }).get('/api/auth/me');
    // Both kinds of refusal, each a database query, share the address's anonymous quota.
    for (let i = 0; i < 3; i += 1) expect((await guessKey(i)).status).toBe(401);
    for (let i = 0; i < ANONYMOUS_QUOTA - 3; i += 1) expect((await guessSite(i)).status).toBe(404);
    for (const flooded of [await guessKey(99), await guessSite(99)]) {
      expect([flooded.status, flooded.body]).toEqual([429, expect.objectContaining({ code: 'RATE_LIMITED' })]);
      expect(Number(flooded.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // A valid key from the same address counts against its own quota, not the address's.
    const valid = await site.server.client('acme').as({ apiKey: site.acme.keys.admin, headers: address }).get('/api/auth/me');
    expect(valid.status).toBe(200);
  });
});

describe('anonymous quota behind two trusted proxies (TRUST_PROXY_HOPS=2)', () => {
  const HOPS_QUOTA = 3;
  const site = useOneSite({ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '2', RATE_LIMIT_POINTS: String(HOPS_QUOTA), RATE_LIMIT_WINDOW_SECONDS: '60' });
  const through = (forwardedFor: string) => site.server.client('acme').as({ headers: { 'x-forwarded-for': forwardedFor } }).get('/api/branding');

  it('counts the address the outer proxy saw, not the inner proxy every caller shares, nor what the client wrote', async () => {
    for (let i = 0; i < HOPS_QUOTA; i += 1) expect((await through(`10.9.9.${i}, 203.0.113.7, 198.51.100.1`)).status).toBe(200);
    expect((await through('10.9.9.99, 203.0.113.7, 198.51.100.1')).status).toBe(429);
    // Another caller behind the same inner proxy has a quota of its own.
    expect((await through('203.0.113.8, 198.51.100.1')).status).toBe(200);
  });
});
