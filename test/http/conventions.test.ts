import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

type Page = { data: { email: string }[]; meta: { pagination: { page: number; pageSize: number; totalItems: number; totalPages: number } } };

let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  for (let i = 0; i < 120; i += 1) {
    const response = await acme.as.admin.post('/api/user', { email: `bulk${String(i).padStart(3, '0')}@acme.example`, role: 'customer' });
    if (response.status !== 201) throw new Error(response.text);
  }
});
afterAll(() => server.close());

describe('errors', () => {
  it('names every failing field of an invalid body', async () => {
    const response = await acme.as.admin.post('/api/user', { email: 'not-an-email', role: 'pilot', password: 'short' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    const fields = (response.body.fields as { field: string }[]).map((f) => f.field).sort();
    expect(fields).toEqual(['email', 'password', 'role']);
  });

  it('refuses unknown fields, so site_id, role or id cannot be smuggled in, and changes nothing', async () => {
    const response = await acme.as.admin.post('/api/application', { name: 'sneaky', role: 'driver', site_id: 'site_other', id: 'app_mine', is_admin: true });
    expect(response.status).toBe(400);
    expect((response.body.fields as { field: string; message: string }[]).map((f) => f.field).sort()).toEqual(['id', 'is_admin', 'site_id']);
    const search = await acme.as.admin.get<{ data: unknown[] }>('/api/application/search?q=sneaky');
    expect(search.body.data).toHaveLength(0);
  });

  it('answers malformed JSON, a non-object body and a wrong media type with clear codes', async () => {
    const client = acme.as.admin;
    expect((await client.send('POST', '/api/address', undefined, '{"city":')).body).toMatchObject({ code: 'INVALID_JSON' });
    expect((await client.send('POST', '/api/address', undefined, '[1,2]')).body).toMatchObject({ code: 'INVALID_BODY' });
    const typed = await server.client('acme').as({ apiKey: acme.keys.admin, headers: { 'content-type': 'text/plain' } }).send('POST', '/api/address', undefined, 'city=Paris');
    expect(typed.status).toBe(415);
  });

  it('refuses a NUL character (which PostgreSQL cannot store) naming the field, and changes nothing; an escaped backslash is no NUL', async () => {
    const client = acme.as.admin;
    const body = await client.send<{ code: string; fields: { field: string }[] }>('POST', '/api/address', undefined, '{"city":"Par\\u0000is","point":{"lat":48.85,"lng":2.35}}');
    expect([body.status, body.body.code, body.body.fields[0]!.field]).toEqual([400, 'INVALID_CHARACTER', 'city']);
    const nested = await client.send<{ fields: { field: string }[] }>('POST', '/api/job', undefined, JSON.stringify({ customer_email: 'nul@example.com', stops: [{ type: 'pickup', city: 'a\u0000', point: { lat: 1, lng: 1 } }] }));
    expect([nested.status, nested.body.fields[0]!.field]).toEqual([400, 'stops.0.city']);
    expect((await client.get<{ data: unknown[] }>('/api/customer/search?q=nul@example.com')).body.data).toEqual([]);
    const query = await client.get<{ code: string; fields: { field: string }[] }>('/api/address?id=%00');
    expect([query.status, query.body.code, query.body.fields[0]!.field]).toEqual([400, 'INVALID_CHARACTER', 'id']);
    expect((await client.get('/api/job/%00')).status).toBeLessThan(500);
    const escaped = await client.send<{ data: { city: string } }>('POST', '/api/address', undefined, '{"city":"C:\\\\u0000","point":{"lat":48.85,"lng":2.35}}');
    expect([escaped.status, escaped.body.data.city]).toEqual([201, 'C:\\u0000']);
  });

  it('refuses a lone UTF-16 surrogate (not well-formed Unicode, which PostgreSQL cannot store) naming the field, and changes nothing; a pair is kept', async () => {
    const client = acme.as.admin;
    const teamCount = async () => (await client.get<Page>('/api/team/search')).body.meta.pagination.totalItems;
    const teamsBefore = await teamCount();
    const lone = await client.send<{ code: string; fields: { field: string }[] }>('POST', '/api/team', undefined, '{"name":"\\ud800"}');
    expect([lone.status, lone.body.code, lone.body.fields[0]!.field]).toEqual([400, 'INVALID_CHARACTER', 'name']);
    expect(await teamCount()).toBe(teamsBefore);
    const trailing = await client.send<{ fields: { field: string }[] }>('POST', '/api/job', undefined, '{"customer_email":"lone@example.com","stops":[{"type":"pickup","city":"Par\\uDC00is","point":{"lat":1,"lng":1}}]}');
    expect([trailing.status, trailing.body.fields[0]!.field]).toEqual([400, 'stops.0.city']);
    expect((await client.get<{ data: unknown[] }>('/api/customer/search?q=lone@example.com')).body.data).toEqual([]);
    const paired = await client.send<{ data: { name: string } }>('POST', '/api/team', undefined, '{"name":"Crew \\ud83d\\ude9a"}');
    expect([paired.status, paired.body.data.name]).toEqual([201, 'Crew \u{1F69A}']);
  });

  it('refuses a date-time whose UTC instant falls outside the years 0001..9999 naming the field, and changes nothing; the edges themselves are kept', async () => {
    for (const instant of ['0000-01-01T00:00:00Z', '0000-12-31T23:59:59Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:30:00-01:00']) {
      const email = `edge-${instant.slice(0, 4)}-${instant.length}-${instant.at(-1) === 'Z' ? 'z' : 'offset'}-${instant.slice(5, 7)}@example.com`;
      const stops = [{ type: 'pickup', city: 'Paris', point: { lat: 48.85, lng: 2.35 }, complete_after: instant }, { type: 'dropoff', city: 'Paris', point: { lat: 48.86, lng: 2.35 } }];
      const created = await acme.as.admin.post<{ code: string; fields: { field: string }[] }>('/api/job', { customer_email: email, stops });
      expect([created.status, created.body.code, created.body.fields?.[0]?.field], instant).toEqual([400, 'VALIDATION_FAILED', 'stops.0.complete_after']);
      expect((await acme.as.admin.get<{ data: unknown[] }>(`/api/customer/search?q=${email}`)).body.data, instant).toEqual([]);
    }
    for (const instant of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
      expect((await acme.as.admin.get(`/api/job/search?created_from=${encodeURIComponent(instant)}`)).status, instant).toBe(200);
    }
  });

  it('refuses a date-time that Date cannot read (a leap second, an RFC 9557 zone suffix) naming the field, and changes nothing', async () => {
    for (const instant of ['2026-06-30T23:59:60Z', '2026-07-01T09:00:00Z[Europe/Paris]']) {
      const email = `when-${instant.length}@example.com`;
      const stops = [{ type: 'pickup', city: 'Paris', point: { lat: 48.85, lng: 2.35 }, complete_after: instant }, { type: 'dropoff', city: 'Paris', point: { lat: 48.86, lng: 2.35 } }];
      const created = await acme.as.admin.post<{ code: string; fields: { field: string }[] }>('/api/job', { customer_email: email, stops });
      expect([created.status, created.body.code, created.body.fields[0]!.field], instant).toEqual([400, 'VALIDATION_FAILED', 'stops.0.complete_after']);
      expect((await acme.as.admin.get<{ data: unknown[] }>(`/api/customer/search?q=${email}`)).body.data).toEqual([]);
      const searched = await acme.as.admin.get<{ fields: { field: string }[] }>(`/api/job/search?created_from=${encodeURIComponent(instant)}`);
      expect([searched.status, searched.body.fields[0]!.field], instant).toEqual([400, 'created_from']);
    }
  });

  it('takes the largest valid job (200 stops, every note at its limit) and refuses a body past 8 MiB, sized or chunked, with 413', async () => {
    const note = 'n'.repeat(2000);
    const stops = Array.from({ length: 200 }, (_, i) => ({
      type: i % 2 === 0 ? 'pickup' : 'dropoff', street_address: `${i} Long Road`, city: 'Paris', point: { lat: 48.85 + i / 10_000, lng: 2.35 },
      customer_notes: note, driver_notes: note, internal_notes: note,
    }));
    const big = await acme.as.admin.post<{ data: { stops: unknown[] } }>('/api/job', { customer_email: 'big@example.com', stops });
    expect([big.status, big.body.data.stops.length]).toEqual([201, 200]);

    // A body a little too large, sized or chunked: read to its end and dropped, then 413.
    const tooBig = JSON.stringify({ city: 'x'.repeat(8 * 1024 * 1024) });
    const sized = await acme.as.admin.send<{ code: string }>('POST', '/api/address', undefined, tooBig);
    expect([sized.status, sized.body.code]).toEqual([413, 'BODY_TOO_LARGE']);
    const chunked = await chunkedPost(9);
    expect(chunked.head).toMatch(/^HTTP\/1\.1 413 /);
    // A client that never stops: answered once 32 MiB were read, not held in memory meanwhile (read whole first,
    // this waited for the end forever).
    const endless = await chunkedPost(Infinity);
    expect(endless.head).toMatch(/^HTTP\/1\.1 413 /);
    expect(endless.sentMiB).toBeLessThan(48);
  });

  it('answers unknown routes with 404 in the error shape and a request id', async () => {
    const response = await acme.as.admin.get('/api/nothing-here');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
  });

  it("gives every error body the spec's message (the same text as error), whatever refused the request", async () => {
    const anonymous = server.client('acme');
    const refusals = [
      await acme.as.admin.post('/api/user', { email: 'not-an-email' }),
      await anonymous.get('/api/auth/me'),
      await acme.as.customer.get('/api/user/search'),
      await acme.as.admin.get('/api/job/job_missing'),
      await server.client('nosuchsite').as({ apiKey: acme.keys.admin }).get('/api/auth/me'),
      await acme.as.admin.get('/api/nothing-here'),
      await acme.as.admin.send('DELETE', '/api/job/job_missing'),
    ];
    for (const response of refusals) {
      const { error, message, code } = response.body as { error: string; message?: string; code: string };
      expect(response.status, code).toBeGreaterThanOrEqual(400);
      expect(message, code).toBe(error);
      expect(message, code).not.toBe('');
    }
    type ErrorSchema = { properties: Record<string, unknown>; required: string[] };
    const document = await server.client(null).get<{ components: { schemas: { Error: ErrorSchema } } }>('/openapi.json');
    const schema = document.body.components.schemas.Error;
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['code', 'message', 'description']));
    expect(schema.required).toEqual(expect.arrayContaining(['error', 'message', 'code']));
  });

  it('puts a request id on every response, echoing a sane one from the caller', async () => {
    const ok = await acme.as.admin.get('/api/auth/me');
    const failed = await server.client('acme').get('/api/auth/me');
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(ok.headers['x-request-id']).toMatch(uuid);
    expect(failed.headers['x-request-id']).toMatch(uuid);
    expect(ok.headers['x-request-id']).not.toBe(failed.headers['x-request-id']);
    const echoed = await server.client('acme').as({ apiKey: acme.keys.admin, headers: { 'x-request-id': 'trace-123' } }).get('/api/auth/me');
    expect(echoed.headers['x-request-id']).toBe('trace-123');
  });
});

describe('pagination and sorting', () => {
  it('pages with page + page_size and reports the search meta', async () => {
    const response = await acme.as.admin.get<Page>('/api/user/search?q=bulk&page=2&page_size=50&sort=email');
    expect(response.status).toBe(200);
    expect(response.body.meta.pagination).toMatchObject({ page: 2, pageSize: 50, totalItems: 120, totalPages: 3 });
    expect(response.body.data[0]!.email).toBe('bulk050@acme.example');
  });

  it('accepts per_page as well, clamping anything above 100 to 100', async () => {
    const response = await acme.as.admin.get<Page>('/api/user/search?q=bulk&per_page=500');
    expect(response.body.data).toHaveLength(100);
    expect(response.body.meta.pagination.pageSize).toBe(100);
  });

  it('sorts by sort=-field and by sort_by + sort_order alike', async () => {
    const dashed = await acme.as.admin.get<Page>('/api/user/search?q=bulk&sort=-email&page_size=3');
    const split = await acme.as.admin.get<Page>('/api/user/search?q=bulk&sort_by=email&sort_order=desc&page_size=3');
    expect(dashed.body.data.map((u) => u.email)).toEqual(['bulk119@acme.example', 'bulk118@acme.example', 'bulk117@acme.example']);
    expect(split.body.data).toEqual(dashed.body.data);
  });

  it('refuses a page past the millionth, naming it, rather than failing at the database', async () => {
    const response = await acme.as.admin.get<{ fields: { field: string }[] }>('/api/job/search?page=500000000000000000');
    expect([response.status, response.body.fields[0]!.field]).toEqual([400, 'page']);
    // The driver's search takes its page in a body.
    const driverSearch = await acme.as.driver.post<{ fields: { field: string }[] }>('/api/driver/job/search', { page: 1_000_000_000_000_000 });
    expect([driverSearch.status, driverSearch.body.fields[0]!.field]).toEqual([400, 'page']);
  });

  it('refuses a field that cannot be sorted', async () => {
    const response = await acme.as.admin.get('/api/user/search?sort=password_hash');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_SORT' });
  });
});

describe('updates', () => {
  it('set a supplied value, keep an omitted one and clear a null one', async () => {
    const created = await acme.as.admin.post<{ data: { id: string } }>('/api/user', { email: 'tri@acme.example', role: 'driver', first_name: 'Tri', phone: '+33123456789' });
    const id = created.body.data.id;
    const updated = await acme.as.admin.put<{ data: Record<string, unknown> }>('/api/user', { id, last_name: 'State', phone: null });
    expect(updated.body.data).toMatchObject({ first_name: 'Tri', last_name: 'State', phone: null });
  });

  it('let home_address_id win over home_address, and clear it with an empty string', async () => {
    const address = await acme.as.admin.post<{ data: { id: string } }>('/api/address', { street_address: '1 Main St', city: 'Springfield', point: { lat: 40, lng: -75 } });
    const user = await acme.as.admin.post<{ data: { id: string } }>('/api/user', { email: 'home@acme.example', role: 'customer' });
    const both = await acme.as.admin.put<{ data: { home_address_id: string; home_address: { city: string } } }>('/api/user', {
      id: user.body.data.id,
      home_address_id: address.body.data.id,
      home_address: { city: 'Elsewhere', point: { lat: 1, lng: 1 } },
    });
    expect(both.body.data.home_address_id).toBe(address.body.data.id);
    expect(both.body.data.home_address.city).toBe('Springfield');
    const inline = await acme.as.admin.put<{ data: { home_address: { city: string; formatted_name: string } } }>('/api/user', {
      id: user.body.data.id,
      home_address: { street_address: '9 Oak Ave', city: 'Shelbyville', point: { lat: 41, lng: -74 } },
    });
    expect(inline.body.data.home_address).toMatchObject({ city: 'Shelbyville', formatted_name: '9 Oak Ave, Shelbyville' });
    const cleared = await acme.as.admin.put<{ data: { home_address_id: unknown } }>('/api/user', { id: user.body.data.id, home_address_id: '' });
    expect(cleared.body.data.home_address_id).toBeNull();
  });
});

describe('health', () => {
  it('answers /healthz and /readyz with the backing services', async () => {
    expect((await server.client(null).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await server.client(null).get('/readyz')).body).toEqual({ status: 'ready', database: 'postgres', redis: 'up' });
  });
});

/**
 * A chunked POST of `mebibytes` (then its end) over a bare socket, 1 MiB after another, that stops sending once the
 * server's answer arrives (a bare socket keeps what it read when the server then closes; an HTTP client would drop
 * it on the broken pipe); the answer's first line and how much was sent.
 */
function chunkedPost(mebibytes: number): Promise<{ head: string; sentMiB: number }> {
  return new Promise((resolve, reject) => {
    let sentMiB = 0;
    let received = '';
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(
        `POST /api/address HTTP/1.1\r\nHost: acme.localhost:${server.port}\r\nx-api-key: ${acme.keys.admin}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
      );
      const chunk = Buffer.concat([Buffer.from('100000\r\n'), Buffer.alloc(0x100000, 0x20), Buffer.from('\r\n')]);
      const send = () => {
        if (received || socket.destroyed) return;
        if (sentMiB >= mebibytes) return void socket.write('0\r\n\r\n');
        if (sentMiB >= 64) return reject(new Error('no answer after 64 MiB'));
        sentMiB += 1;
        socket.write(chunk, () => setImmediate(send));
      };
      send();
    });
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      if (received.includes('\r\n')) {
        socket.destroy();
        resolve({ head: received, sentMiB });
      }
    });
    socket.on('error', () => undefined);
    setTimeout(() => reject(new Error(`no answer after ${sentMiB} MiB`)), 20_000);
  });
}
