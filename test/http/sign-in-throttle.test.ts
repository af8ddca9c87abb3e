import { describe, expect, it } from 'vitest';
import type { ApiResponse } from '../support/http-client.ts';
import { useTwoSites } from '../support/two-sites.ts';

const FAILURES = 3;
const WINDOW_SECONDS = 900;

const MODES: { mode: string; env: Record<string, string> }[] = [
  { mode: 'Redis', env: {} },
  { mode: 'in process', env: { REDIS_URL: '' } },
];

type SignInAnswer = { code?: string; data?: { type: string } };

describe.each(MODES)('failed sign-ins per account ($mode)', ({ env }) => {
  const sites = useTwoSites({ SIGNIN_FAILURE_LIMIT: String(FAILURES), SIGNIN_FAILURE_WINDOW_SECONDS: String(WINDOW_SECONDS), ...env });

  function signIn(site: string | null, email: string, password: string): Promise<ApiResponse<SignInAnswer>> {
    return sites.server.client(site).post<SignInAnswer>('/api/auth/signin', { email, password });
  }

  it('past the limit even the right password is 429 with Retry-After; other accounts and hosts still sign in', async () => {
    const { driver, dispatcher } = sites.acme.users;
    for (let attempt = 0; attempt < FAILURES; attempt += 1) {
      const wrong = await signIn('acme', driver.email, 'not-the-password');
      expect([wrong.status, wrong.body.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    }
    const refused = await signIn('acme', driver.email.toUpperCase(), driver.password);
    expect([refused.status, refused.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(refused.headers['ratelimit-policy']).toBe(`${FAILURES};w=${WINDOW_SECONDS}`);

    expect((await signIn('acme', dispatcher.email, dispatcher.password)).status).toBe(200);
    // The count is per host too: the platform host still lets the driver pre-authenticate.
    const elsewhere = await signIn(null, driver.email, driver.password);
    expect([elsewhere.status, elsewhere.body.data?.type]).toEqual([200, 'pre_authentication']);
  });

  it('counts failures only, and a successful sign-in clears them', async () => {
    const { customer } = sites.acme.users;
    for (let round = 0; round < 3; round += 1) {
      for (let attempt = 0; attempt < FAILURES - 1; attempt += 1) expect((await signIn('acme', customer.email, 'a-wrong-guess')).status).toBe(401);
      expect((await signIn('acme', customer.email, customer.password)).status).toBe(200);
    }
    for (let attempt = 0; attempt < FAILURES * 2; attempt += 1) expect((await signIn('acme', customer.email, customer.password)).status).toBe(200);
  });

  it('lets at most the limit of a burst of parallel guesses reach the password check', async () => {
    const { admin } = sites.globex.users;
    const answers = await Promise.all(Array.from({ length: FAILURES * 4 }, (_, i) => signIn('globex', admin.email, `guess-${i}`)));
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(FAILURES);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(FAILURES * 3);
  });
});
