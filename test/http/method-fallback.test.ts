import { describe, expect, it } from 'vitest';
import { useOneSite } from '../support/one-site.ts';

const site = useOneSite();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('a known path asked with a method it does not serve', () => {
  it('answers 405 METHOD_NOT_ALLOWED with Allow naming the methods the path serves, and a request id', async () => {
    const job = await site.acme.as.admin.send<{ code: string }>('DELETE', '/api/job/job_x');
    expect([job.status, job.body.code, job.headers.allow]).toEqual([405, 'METHOD_NOT_ALLOWED', 'GET, HEAD, PATCH']);
    expect(job.headers['x-request-id']).toMatch(UUID);

    const webhook = await site.acme.as.admin.send<{ code: string }>('PATCH', '/api/webhook?id=whk_x', { url: 'https://example.com' });
    expect([webhook.status, webhook.body.code, webhook.headers.allow]).toEqual([405, 'METHOD_NOT_ALLOWED', 'DELETE, GET, HEAD, POST, PUT']);

    const probe = await site.server.client(null).post<{ code: string }>('/healthz');
    expect([probe.status, probe.body.code, probe.headers.allow]).toEqual([405, 'METHOD_NOT_ALLOWED', 'GET, HEAD']);
  });

  it('still answers an unknown path 404 ROUTE_NOT_FOUND, with a request id (echoing a sane one)', async () => {
    const missing = await site.acme.as.admin.get<{ code: string }>('/api/nothing-here');
    expect([missing.status, missing.body.code, missing.headers.allow]).toEqual([404, 'ROUTE_NOT_FOUND', undefined]);
    expect(missing.headers['x-request-id']).toMatch(UUID);
    const webdav = await site.acme.as.admin.send<{ code: string }>('PROPFIND', '/api/nothing-here');
    expect([webdav.status, webdav.body.code, webdav.headers['x-request-id']]).toEqual([404, 'ROUTE_NOT_FOUND', expect.stringMatching(UUID)]);
    const traced = await site.server.client('acme').as({ headers: { 'x-request-id': 'trace-405' } }).send('DELETE', '/api/job/job_x');
    expect(traced.headers['x-request-id']).toBe('trace-405');
  });
});

describe('HEAD', () => {
  it("is served by the path's GET handler: its status and headers, without a body", async () => {
    const health = await site.server.client(null).send('HEAD', '/healthz');
    expect([health.status, health.text]).toEqual([200, '']);

    const me = await site.acme.as.admin.send('HEAD', '/api/auth/me');
    expect([me.status, me.text, me.headers['content-type']]).toEqual([200, '', 'application/json;charset=UTF-8']);
    expect(me.headers['x-request-id']).toMatch(UUID);
    expect(me.headers['ratelimit-limit']).toBeDefined();

    const anonymous = await site.server.client('acme').send('HEAD', '/api/auth/me');
    expect([anonymous.status, anonymous.text]).toEqual([401, '']);
  });

  it('of a path without GET is 405, and of an unknown path 404, both without a body', async () => {
    const postOnly = await site.acme.as.admin.send('HEAD', '/api/auth/signin');
    expect([postOnly.status, postOnly.text, postOnly.headers.allow]).toEqual([405, '', 'POST']);
    const unknown = await site.acme.as.admin.send('HEAD', '/api/nothing-here');
    expect([unknown.status, unknown.text]).toEqual([404, '']);
    expect(unknown.headers['x-request-id']).toMatch(UUID);
  });
});
