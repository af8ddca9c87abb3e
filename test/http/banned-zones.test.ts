import { beforeAll, describe, expect, it } from 'vitest';
import { createOperator, signIn } from '../support/fixtures.ts';
import { jobRequest, type JobBody } from '../support/job-fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T = Record<string, unknown>> = { data: T };
type Many<T = Record<string, unknown>> = { data: T[] };
type Failure = { code: string; error: string; fields?: { field: string }[]; details?: { hits: { stop_index: number; zone_id: string; zone_name: string }[] } };
type Audit = { action: string; new_data: { zone_ids?: string[] } };
type JobWithAddresses = JobBody & { stops: (JobBody['stops'][number] & { address_id: string })[] };

/** A square around the first stop of `jobRequest` (10 Rue de Rivoli, 48.8556 N 2.3522 E); the second stop is outside. */
const RIVOLI = { type: 'Polygon', coordinates: [[[2.34, 48.85], [2.36, 48.85], [2.36, 48.86], [2.34, 48.86], [2.34, 48.85]]] };
const OUTSIDE_STOP = { type: 'pickup', street_address: '1 Place de la Concorde', city: 'Paris', point: { lat: 48.8656, lng: 2.3212 } };

const sites = useTwoSites();
let bannedId: string;

beforeAll(async () => {
  const zone = await sites.acme.as.admin.post<One<{ id: string }>>('/api/zone', { name: 'Rivoli works', kind: 'banned', geometry: RIVOLI });
  bannedId = zone.body.data.id;
});

describe('banned zones in job creation', () => {
  it("refuses a customer's job in a banned zone even with the override flag; a dispatcher's passes with it", async () => {
    for (const override of [undefined, true]) {
      const refused = await sites.acme.as.customer.post<Failure>('/api/job', jobRequest({ customer_email: undefined, override_zone_restriction: override }));
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'stops.0' }] });
      expect(refused.body.error).toContain('Rivoli works');
      expect(refused.body.details?.hits).toEqual([{ stop_index: 0, zone_id: bannedId, zone_name: 'Rivoli works' }]);
    }
    const withoutFlag = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest());
    expect(withoutFlag.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'stops.0' }] });

    const passed = await sites.acme.as.dispatcher.post<One<JobBody>>('/api/job', jobRequest({ override_zone_restriction: true }));
    expect(passed.status).toBe(201);
    const audit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Job&entity_id=${passed.body.data.id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'zone_override']);
    expect(audit.body.data.find((r) => r.action === 'zone_override')?.new_data.zone_ids).toEqual([bannedId]);
  });

  it('names the stop given by address_id that lies in the zone, and lets stops outside pass', async () => {
    const address = await sites.acme.as.admin.post<One<{ id: string }>>('/api/address', { street_address: '12 Rue de Rivoli', city: 'Paris', point: { lat: 48.855, lng: 2.355 } });
    const request = jobRequest();
    const refused = await sites.acme.as.admin.post<Failure>('/api/job', { ...request, stops: [OUTSIDE_STOP, { type: 'dropoff', address_id: address.body.data.id }] });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'stops.1' }] });

    const outside = await sites.acme.as.customer.post<One<JobBody>>('/api/job', { ...request, customer_email: undefined, stops: [OUTSIDE_STOP, (request.stops as unknown[])[1]] });
    expect(outside.status).toBe(201);
    const audit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Job&entity_id=${outside.body.data.id}`);
    expect(audit.body.data.map((r) => r.action)).toEqual(['create']);
  });

  it("does not block with an inactive banned zone, a service zone or another site's zone", async () => {
    await sites.globex.as.admin.post('/api/zone', { name: 'Globex ban', kind: 'banned', geometry: RIVOLI });
    await sites.acme.as.admin.post('/api/zone', { name: 'Service area', kind: 'service', geometry: RIVOLI });
    const refused = await sites.acme.as.customer.post<Failure>('/api/job', jobRequest({ customer_email: undefined }));
    expect(refused.body.details?.hits).toEqual([{ stop_index: 0, zone_id: bannedId, zone_name: 'Rivoli works' }]);

    await sites.acme.as.admin.put('/api/zone', { id: bannedId, is_active: false });
    expect((await sites.acme.as.customer.post('/api/job', jobRequest({ customer_email: undefined }))).status).toBe(201);
    await sites.acme.as.admin.put('/api/zone', { id: bannedId, is_active: true });
  });
});

describe('banned zones in job and stop updates', () => {
  const INSIDE = { street_address: '14 Rue de Rivoli', city: 'Paris', point: { lat: 48.8552, lng: 2.3541 } };

  it("refuses to move a customer's stop into a banned zone, override flag or not, and changes nothing", async () => {
    const job = await outsideJob(true);
    const before = await stopAddress(job.id);
    const inside = await sites.acme.as.customer.post<One<{ id: string }>>('/api/address', INSIDE);
    for (const override of [undefined, true]) {
      const refused = await sites.acme.as.customer.send<Failure>('PATCH', `/api/job/${job.id}`, { stops: [{ id: job.stops[0]!.id, address_id: inside.body.data.id }], override_zone_restriction: override });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'stops.0.address_id' }] });
      expect(refused.body.details?.hits).toEqual([{ stop_index: 0, zone_id: bannedId, zone_name: 'Rivoli works' }]);
    }
    expect(await stopAddress(job.id)).toBe(before);
  });

  it('lets staff move a stop into a banned zone only with the override, audited on the job', async () => {
    const job = await outsideJob(false);
    const inside = await sites.acme.as.dispatcher.post<One<{ id: string }>>('/api/address', INSIDE);
    const move = { id: job.id, stops: [{ id: job.stops[0]!.id, address_id: inside.body.data.id }] };
    expect((await sites.acme.as.dispatcher.put<Failure>('/api/job', move)).body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'stops.0.address_id' }] });
    const stopOnly = await sites.acme.as.dispatcher.put<Failure>('/api/stop', { id: job.stops[0]!.id, address_id: inside.body.data.id });
    expect(stopOnly.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'address_id' }] });
    const other = await outsideJob(false);
    const stopMoved = await sites.acme.as.dispatcher.put<One<{ address_id: string }>>('/api/stop', { id: other.stops[0]!.id, address_id: inside.body.data.id, override_zone_restriction: true });
    expect([stopMoved.status, stopMoved.body.data.address_id]).toEqual([200, inside.body.data.id]);
    const otherAudit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Job&entity_id=${other.id}`);
    expect(otherAudit.body.data.find((r) => r.action === 'zone_override')?.new_data.zone_ids).toEqual([bannedId]);

    const moved = await sites.acme.as.dispatcher.put<One<JobWithAddresses>>('/api/job', { ...move, override_zone_restriction: true });
    expect(moved.status).toBe(200);
    expect(moved.body.data.stops[0]!.address_id).toBe(inside.body.data.id);
    const audit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Job&entity_id=${job.id}`);
    expect(audit.body.data.find((r) => r.action === 'zone_override')?.new_data.zone_ids).toEqual([bannedId]);
  });
});

describe('address changes under jobs', () => {
  const INSIDE_POINT = { lat: 48.8552, lng: 2.3541 };

  it("refuses a customer's change of an address another customer's job uses, and changes nothing", async () => {
    const theirs = await outsideJob(false);
    const address = theirs.stops[0]!.address_id;
    const refused = await sites.acme.as.customer.put<Failure>('/api/address', { id: address, street_address: '1 Elsewhere', point: { lat: 48.87, lng: 2.33 } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'ADDRESS_IN_USE', fields: [{ field: 'id' }] });
    expect((await sites.acme.as.admin.get<One<{ street_address: string }>>(`/api/address?id=${address}`)).body.data.street_address).toBe(OUTSIDE_STOP.street_address);

    const home = await sites.acme.as.dispatcher.post<One<{ home_address_id: string }>>('/api/customer', { email: 'homer@example.com', home_address: { street_address: '1 Home Lane', point: { lat: 48.87, lng: 2.33 } } });
    const someoneElsesHome = await sites.acme.as.customer.put<Failure>('/api/address', { id: home.body.data.home_address_id, street_address: '2 Home Lane' });
    expect([someoneElsesHome.status, someoneElsesHome.body.code]).toEqual([403, 'ADDRESS_IN_USE']);

    const own = await sites.acme.as.customer.post<One<{ id: string }>>('/api/address', { street_address: '3 Rue Neuve', point: { lat: 48.87, lng: 2.33 } });
    expect((await sites.acme.as.customer.put('/api/address', { id: own.body.data.id, street_address: '5 Rue Neuve' })).status).toBe(200);
  });

  it("keeps another person's address from customers and drivers: absent to read, absent to name on a job", async () => {
    const theirs = await outsideJob(false);
    const mine = await outsideJob(true);
    const address = theirs.stops[0]!.address_id;
    expect((await sites.acme.as.customer.get(`/api/address?id=${address}`)).status).toBe(404);
    expect((await sites.acme.as.driver.get(`/api/address?id=${address}`)).status).toBe(404);
    expect((await sites.acme.as.dispatcher.get(`/api/address?id=${address}`)).status).toBe(200);
    expect((await sites.acme.as.customer.get(`/api/address?id=${mine.stops[0]!.address_id}`)).status).toBe(200);
    const named = await sites.acme.as.customer.post<Failure>('/api/job', { stops: [{ type: 'pickup', address_id: address }, (jobRequest().stops as unknown[])[1]] });
    expect([named.status, named.body.fields?.[0]?.field]).toEqual([404, 'stops.0.address_id']);
    const moved = await sites.acme.as.customer.send<Failure>('PATCH', `/api/job/${mine.id}`, { stops: [{ id: mine.stops[0]!.id, address_id: address }] });
    expect([moved.status, moved.body.fields?.[0]?.field]).toEqual([404, 'stops.0.address_id']);
  });

  it('moves an open stop\'s address into a banned zone only for staff with the override, audited on the job', async () => {
    const mine = await outsideJob(true);
    const refused = await sites.acme.as.customer.put<Failure>('/api/address', { id: mine.stops[0]!.address_id, point: INSIDE_POINT, override_zone_restriction: true });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'point' }] });

    const theirs = await outsideJob(false);
    const move = { id: theirs.stops[0]!.address_id, point: INSIDE_POINT };
    expect((await sites.acme.as.dispatcher.put<Failure>('/api/address', move)).body.code).toBe('ZONE_RESTRICTED');
    expect((await sites.acme.as.dispatcher.put('/api/address', { ...move, override_zone_restriction: true })).status).toBe(200);
    const audit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Job&entity_id=${theirs.id}`);
    expect(audit.body.data.find((r) => r.action === 'zone_override')?.new_data.zone_ids).toEqual([bannedId]);
  });
});

describe('a global address moved on the platform host', () => {
  it("follows the banned-zone rule of each site's open stop standing on it: refused, then passed with the override and audited on the job", async () => {
    const credentials = await createOperator(sites.server);
    const session = await signIn(sites.server.client(null), credentials.email, credentials.password);
    const operator = sites.server.client(null).as({ accessToken: session.access_token });
    const global = await operator.post<One<{ id: string }>>('/api/address', { street_address: '2 Place de la Concorde', city: 'Paris', point: OUTSIDE_STOP.point });
    expect(global.status).toBe(201);
    const job = await sites.acme.as.dispatcher.post<One<JobWithAddresses>>('/api/job', jobRequest({ stops: [{ type: 'pickup', address_id: global.body.data.id }, (jobRequest().stops as unknown[])[1]] }));
    expect(job.status).toBe(201);

    const move = { id: global.body.data.id, point: { lat: 48.8552, lng: 2.3541 } };
    const refused = await operator.put<Failure>('/api/address', move);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'ZONE_RESTRICTED', fields: [{ field: 'point' }] });
    expect(refused.body.details?.hits).toEqual([{ stop_index: 0, zone_id: bannedId, zone_name: 'Rivoli works' }]);
    expect((await operator.get<One<{ point: { lat: number } }>>(`/api/address?id=${move.id}`)).body.data.point.lat).toBe(OUTSIDE_STOP.point.lat);

    expect((await operator.put('/api/address', { ...move, override_zone_restriction: true })).status).toBe(200);
    const audit = await sites.acme.as.admin.get<Many<Audit>>(`/api/audit/search?entity_type=Job&entity_id=${job.body.data.id}`);
    expect(audit.body.data.find((r) => r.action === 'zone_override')?.new_data.zone_ids).toEqual([bannedId]);
  });
});

/** A job with both stops outside the banned zone: a customer's own (their API key), or one staff made for another customer. */
async function outsideJob(customer: boolean): Promise<JobWithAddresses> {
  const client = customer ? sites.acme.as.customer : sites.acme.as.dispatcher;
  const created = await client.post<One<JobWithAddresses>>('/api/job', jobRequest({ customer_email: customer ? undefined : 'zoe@example.com', stops: [OUTSIDE_STOP, (jobRequest().stops as unknown[])[1]] }));
  expect(created.status).toBe(201);
  return created.body.data;
}

/** The address of a job's first stop, as staff read it. */
async function stopAddress(jobId: string): Promise<string> {
  return (await sites.acme.as.admin.get<One<JobWithAddresses>>(`/api/job/${jobId}`)).body.data.stops[0]!.address_id;
}
