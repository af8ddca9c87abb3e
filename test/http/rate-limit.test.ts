import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const QUOTA = 25;

const MODES: { mode: string; env: Record<string, string> }[] = [
  { mode: 'Redis', env: {} },
  { mode: 'in process', env: { REDIS_URL: '' } },
];

describe.each(MODES)('rate limits ($mode)', ({ env }) => {
  let server: TestServer;
  let acme: SiteFixture;
  let globex: SiteFixture;

  beforeAll(async () => {
    server = await startTestServer({ RATE_LIMIT_POINTS: String(QUOTA), RATE_LIMIT_WINDOW_SECONDS: '60', ...env });
    acme = await createSiteFixture(server, 'acme');
    globex = await createSiteFixture(server, 'globex');
  });
  afterAll(() => server.close());

  it('lets exactly the quota through a burst of 3x on one key, and every 429 says when to retry', async () => {
    const responses = await Promise.all(Array.from({ length: QUOTA * 3 }, () => acme.as.dispatcher.get('/api/auth/me')));
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
    expect((await acme.as.admin.get('/api/auth/me')).status).toBe(200);
    expect((await globex.as.dispatcher.get('/api/auth/me')).status).toBe(200);
  });
});
