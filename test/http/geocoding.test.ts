import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobRequest } from '../support/job-fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';
import { startRecordedEngine, type RecordedEngine } from '../fixtures/mapping/recorded-engine.ts';

type One<T> = { data: T };
type Point = { lat: number; lng: number };
type Failure = { code: string; fields?: { field: string }[] };

// The recorded Nominatim runs on loopback, which only tests may let a site's integration dial.
const sites = useTwoSites({ WEBHOOK_ALLOW_LOOPBACK: 'true' });
let engine: RecordedEngine;

beforeAll(async () => {
  engine = await startRecordedEngine({ '/search': { fixture: 'nominatim-search.json' }, '/reverse': { fixture: 'nominatim-reverse.json' } });
});
afterAll(() => engine.close());

/** The first match of the recorded search (12 Rue de Rivoli, Paris). */
const RIVOLI = { lat: 48.8560412, lng: 2.3523657 };
const TEXT_ONLY = { street_address: '12 Rue de Rivoli', city: 'Paris' };

describe('addresses without a point', () => {
  it('are refused on a site without a geocoder, and found by the geocoder a site connected', async () => {
    const refused = await sites.acme.as.dispatcher.post<Failure>('/api/address', TEXT_ONLY);
    expect([refused.status, refused.body.code]).toEqual([400, 'POINT_REQUIRED']);

    const connected = await sites.acme.as.admin.put('/api/integration?integration_key=nominatim', { config: { base_url: engine.baseUrl }, is_active: true });
    expect(connected.status).toBe(200);
    const address = await sites.acme.as.dispatcher.post<One<{ id: string; point: Point; street_address: string }>>('/api/address', TEXT_ONLY);
    expect(address.status).toBe(201);
    expect(address.body.data).toMatchObject({ point: RIVOLI, street_address: TEXT_ONLY.street_address });
    expect(engine.requests.at(-1)!.searchParams.get('q')).toBe('12 Rue de Rivoli, Paris');

    const job = await sites.acme.as.dispatcher.post<One<{ stops: { address: { point: Point } }[] }>>('/api/job', jobRequest({ stops: [{ type: 'pickup', ...TEXT_ONLY }, (jobRequest().stops as unknown[])[1]] }));
    expect(job.status).toBe(201);
    expect(job.body.data.stops[0]!.address.point).toEqual(RIVOLI);

    const customer = await sites.acme.as.dispatcher.post<One<{ home_address: { point: Point } }>>('/api/customer', { email: 'geo@example.com', home_address: TEXT_ONLY });
    expect([customer.status, customer.body.data.home_address.point]).toEqual([201, RIVOLI]);

    // home_address_id wins over home_address: its text is not looked up (nor stored).
    const asked = engine.requests.length;
    const withId = await sites.acme.as.dispatcher.post<One<{ home_address_id: string }>>('/api/customer', { email: 'geo2@example.com', home_address_id: address.body.data.id, home_address: { street_address: 'Elsewhere' } });
    expect([withId.status, withId.body.data.home_address_id, engine.requests.length]).toEqual([201, address.body.data.id, asked]);

    // Text longer than the geocoder takes names the request's field.
    const long = await sites.acme.as.dispatcher.post<Failure>('/api/address', { street_address: 'x'.repeat(300), city: 'y'.repeat(250) });
    expect([long.status, long.body.code, long.body.fields?.[0]?.field]).toEqual([422, 'ADDRESS_NOT_FOUND', 'point']);

    // Another site's geocoder is not this one's.
    expect((await sites.globex.as.dispatcher.post<Failure>('/api/address', TEXT_ONLY)).body.code).toBe('POINT_REQUIRED');
  });

  it('answer 422 ADDRESS_NOT_FOUND naming the field when the geocoder finds nothing, and store nothing', async () => {
    await sites.acme.as.admin.put('/api/integration?integration_key=nominatim', { config: { base_url: engine.baseUrl }, is_active: true });
    engine.answer('/search', { raw: '[]', contentType: 'application/json' });
    try {
      const address = await sites.acme.as.dispatcher.post<Failure>('/api/address', { street_address: 'Nowhere Lane' });
      expect([address.status, address.body.code, address.body.fields?.[0]?.field]).toEqual([422, 'ADDRESS_NOT_FOUND', 'point']);
      const job = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest({ customer_email: 'nowhere@example.com', stops: [(jobRequest().stops as unknown[])[0], { type: 'dropoff', street_address: 'Nowhere Lane' }] }));
      expect([job.status, job.body.code, job.body.fields?.[0]?.field]).toEqual([422, 'ADDRESS_NOT_FOUND', 'stops.1.point']);
      const customers = await sites.acme.as.dispatcher.get<{ data: unknown[] }>('/api/customer/search?q=nowhere');
      expect(customers.body.data).toEqual([]);
    } finally {
      engine.answer('/search', { fixture: 'nominatim-search.json' });
    }
  });
});

describe('a request its own checks refuse', () => {
  it('is refused before any geocoder call: a job with two stops of one order, a customer already here', async () => {
    await sites.acme.as.admin.put('/api/integration?integration_key=nominatim', { config: { base_url: engine.baseUrl }, is_active: true });
    expect((await sites.acme.as.dispatcher.post('/api/customer', { email: 'already@example.com' })).status).toBe(201);
    const asked = engine.requests.length;

    const stops = [{ type: 'pickup', ...TEXT_ONLY, order: 1 }, { type: 'dropoff', street_address: '1 Quai de Conti', city: 'Paris', order: 1 }];
    const job = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest({ customer_email: 'twice@example.com', stops }));
    expect([job.status, job.body.code, job.body.fields?.[0]?.field]).toEqual([400, 'DUPLICATE_STOP_ORDER', 'stops.1.order']);
    const customer = await sites.acme.as.dispatcher.post<Failure>('/api/customer', { email: 'already@example.com', home_address: TEXT_ONLY });
    expect([customer.status, customer.body.code]).toEqual([409, 'CUSTOMER_EXISTS']);

    expect(engine.requests.length).toBe(asked);
    expect((await sites.acme.as.dispatcher.get<{ data: unknown[] }>('/api/customer/search?q=twice')).body.data).toEqual([]);
  });
});

describe('GET /geocode', () => {
  it("looks an address up, or the address at a point, through the site's geocoder; 422 without one, 400 for a bad query", async () => {
    type Matches = { data: { point: Point; label: string }[] };
    const offline = await sites.globex.as.dispatcher.get<Failure>('/api/geocode?q=12%20Rue%20de%20Rivoli');
    expect([offline.status, offline.body.code]).toEqual([422, 'GEOCODING_UNAVAILABLE']);
    await sites.acme.as.admin.put('/api/integration?integration_key=nominatim', { config: { base_url: engine.baseUrl }, is_active: true });
    const found = await sites.acme.as.customer.get<Matches>('/api/geocode?q=12%20Rue%20de%20Rivoli%2C%20Paris');
    expect(found.status).toBe(200);
    expect(found.body.data[0]!.point).toEqual(RIVOLI);
    expect(engine.requests.at(-1)!.searchParams.get('q')).toBe('12 Rue de Rivoli, Paris');
    const at = await sites.acme.as.dispatcher.get<Matches>('/api/geocode?lat=48.856&lng=2.3524');
    expect([at.status, at.body.data.length]).toEqual([200, 1]);
    expect(at.body.data[0]!.label).toContain('Rue de Rivoli');
    for (const query of ['', '?q=x&lat=1&lng=2', '?lat=48.8']) {
      const refused = await sites.acme.as.dispatcher.get<Failure>(`/api/geocode${query}`);
      expect([refused.status, refused.body.code]).toEqual([400, 'VALIDATION_FAILED']);
    }
    expect((await sites.acme.as.driver.get('/api/geocode?q=x')).status).toBe(403);
  });
});
