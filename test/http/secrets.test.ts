import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import { ADMIN_URL } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer({ LOG_LEVEL: 'trace' });
  acme = await createSiteFixture(server, 'acme');
});
afterAll(() => server.close());

describe('secrets at rest and in logs', () => {
  it('never stores or logs a planted API key, password or refresh token in plain text', async () => {
    const password = 'planted-password-7f3a9c';
    const user = await acme.as.admin.post<{ data: { id: string } }>('/api/user', { email: 'planted@acme.example', role: 'dispatcher', password });
    expect(user.status).toBe(201);
    const key = await acme.as.admin.post<{ data: { api_key: string } }>('/api/application', { name: 'planted key', role: 'driver' });
    const apiKey = key.body.data.api_key;
    expect(apiKey).toMatch(/^dsk_/);
    const session = await signIn(server.client('acme'), 'planted@acme.example', password);
    const rotated = await server.client('acme').post<{ data: { refresh_token: string } }>('/api/auth/refresh', { refresh_token: session.refresh_token });
    await server.client('acme').as({ apiKey }).get('/api/auth/me');
    await server.client('acme').post('/api/auth/signin', { email: 'planted@acme.example', password: 'wrong-but-logged?' });

    const url = new URL(ADMIN_URL);
    url.pathname = `/${server.database}`;
    const { stdout: dump } = await promisify(execFile)('pg_dump', ['--data-only', url.toString()], { maxBuffer: 64 * 1024 * 1024 });
    expect(dump).toContain('planted@acme.example');
    const logs = server.logs.join('');
    expect(logs).toContain('auth.signin');
    for (const secret of [password, apiKey, session.refresh_token, session.access_token, rotated.body.data.refresh_token]) {
      expect(dump).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
    expect(logs).not.toContain('wrong-but-logged?');
  });

  it('shows an API key once: later reads return only a masked preview', async () => {
    const created = await acme.as.admin.post<{ data: { id: string; api_key: string } }>('/api/application', { name: 'shown once', role: 'customer' });
    const read = await acme.as.admin.get<{ data: { api_key: string } }>(`/api/application?id=${created.body.data.id}`);
    expect(read.body.data.api_key).toBe(`${created.body.data.api_key.slice(0, 10)}…`);
  });
});
