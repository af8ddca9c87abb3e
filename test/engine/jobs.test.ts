import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob, jobRequest, stateIds, type JobBody } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
let jobStates: Record<string, string>;
let stopStates: Record<string, string>;

/** Rows of a tenant table for acme, read the way the application reads (inside the tenant's scope). */
async function count(table: string): Promise<number> {
  const rows: { n: number }[] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) => em.execute(`select count(*)::int as n from ${table}`));
  return rows[0]!.n;
}

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
  jobStates = await stateIds(acme.as.admin, 'job');
  stopStates = await stateIds(acme.as.admin, 'stop');
});
afterAll(() => server.close());

describe('creating jobs', () => {
  it('answers the detail shape: ordered stops with type and address, and a job:create event', async () => {
    const job = await createJob(acme.as.dispatcher);
    type Detail = Omit<JobBody, 'stops'> & { driver_user_id: null; stops: { order: number; type: string; address: { street_address: string } }[] };
    const response = await acme.as.dispatcher.get<{ data: Detail }>(`/api/job/${job.id}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: job.id, driver_user_id: null, phase: 'unassigned', workflow_state: { key: 'created' } });
    expect(response.body.data.stops.map((s) => [s.order, s.type, s.address.street_address])).toEqual([
      [0, 'pickup', '10 Rue de Rivoli'],
      [1, 'dropoff', '5 Avenue Montaigne'],
    ]);
    const events: { event: string }[] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute(`select event from outbox where entity_id = ? order by seq`, [job.id]),
    );
    expect(events.map((e) => e.event)).toEqual(['job:create']);
  });

  it('answers what a later read shows, for staff and for a customer, and the job:create event carries the same job', async () => {
    const first = await createJob(acme.as.dispatcher);
    const known = (first.stops[0] as unknown as { address_id: string }).address_id;
    const stops = [
      { type: 'pickup', address_id: known, contact_name: 'Ada', complete_after: '2026-12-01T09:00:00.000Z', complete_before: '2026-12-01T10:00:00.000Z' },
      { type: 'dropoff', street_address: '5 Avenue Montaigne', city: 'Paris', point: { lat: 48.8662, lng: 2.3047 }, driver_notes: 'gate code 12', internal_notes: 'staff only' },
    ];
    const created = await acme.as.dispatcher.post<{ data: JobBody }>('/api/job', jobRequest({ stops, internal_notes: 'vip', customer_notes: 'fragile' }));
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual((await acme.as.dispatcher.get<{ data: JobBody }>(`/api/job/${created.body.data.id}`)).body.data);
    const [event] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<{ payload: { data: unknown } }[]>(`select payload from outbox where entity_id = ? and event = 'job:create'`, [created.body.data.id]),
    );
    expect(event!.payload.data).toEqual(created.body.data);
    // A customer names no other customer's address (it would show them that person's place): theirs is inline; nor
    // writes internal notes (staff's own).
    const ownStops = [{ ...stops[0], address_id: undefined, street_address: '10 Rue de Rivoli', city: 'Paris', point: { lat: 48.8556, lng: 2.3522 } }, { ...stops[1], internal_notes: undefined }];
    const own = await acme.as.customer.post<{ data: JobBody }>('/api/job', jobRequest({ customer_email: undefined, stops: ownStops }));
    expect(own.status).toBe(201);
    expect(own.body.data).toEqual((await acme.as.customer.get<{ data: JobBody }>(`/api/job/${own.body.data.id}`)).body.data);
    expect(JSON.stringify(own.body.data)).not.toContain('internal_notes');
  });

  it.each([
    ['a stop without address or point', { stops: [{ type: 'pickup', city: 'Paris' }] }, 400, 'stops.0.point'],
    ['a time window that ends before it starts', { stops: [{ type: 'pickup', point: { lat: 1, lng: 1 }, complete_after: '2026-12-01T10:00:00Z', complete_before: '2026-12-01T09:00:00Z' }] }, 400, 'stops.0.complete_before'],
    ['an unknown service type', { service_type_id: 'svt_01NOPE000000000000000000000' }, 404, 'service_type_id'],
    ['no stop at all', { stops: [] }, 400, 'stops'],
  ])('refuses %s naming the field, and creates nothing', async (_name, overrides, status, field) => {
    const before = [await count('job'), await count('stop'), await count('outbox')];
    const response = await acme.as.dispatcher.post('/api/job', jobRequest(overrides));
    expect(response.status).toBe(status);
    expect((response.body.fields as { field: string }[]).map((f) => f.field)).toContain(field);
    expect([await count('job'), await count('stop'), await count('outbox')]).toEqual(before);
  });

  it("names the customer an email gives: this site's customer, another site's user with a new profile here; refuses a deactivated one, writing nothing", async () => {
    const own = await createJob(acme.as.dispatcher, { customer_email: acme.users.customer.email.toUpperCase() });
    expect(own.customer_user_id).toBe(acme.users.customer.id);
    const profiles = () => inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<{ n: number }[]>(`select count(*)::int as n from user_profile where user_id = ? and role = 'customer'`, [globex.users.driver.id]));
    const visiting = await createJob(acme.as.dispatcher, { customer_email: globex.users.driver.email });
    expect(visiting.customer_user_id).toBe(globex.users.driver.id);
    expect((await createJob(acme.as.dispatcher, { customer_email: globex.users.driver.email })).customer_user_id).toBe(globex.users.driver.id);
    expect((await profiles())[0]!.n).toBe(1);

    const leaving = await createJob(acme.as.dispatcher, { customer_email: 'leaving-soon@shop.example' });
    expect((await acme.as.admin.put('/api/customer', { id: leaving.customer_user_id, is_active: false })).status).toBe(200);
    const [jobs, addresses] = [await count('job'), await count('address')];
    const refused = await acme.as.dispatcher.post<{ code: string }>('/api/job', jobRequest({ customer_email: 'leaving-soon@shop.example' }));
    expect([refused.status, refused.body.code]).toEqual([409, 'CUSTOMER_INACTIVE']);
    expect((await acme.as.admin.put('/api/customer', { id: leaving.customer_user_id, is_active: true })).status).toBe(200);
    expect((await acme.as.admin.put('/api/user', { id: leaving.customer_user_id, is_active: false })).status).toBe(200);
    const inactiveUser = await acme.as.dispatcher.post<{ code: string }>('/api/job', jobRequest({ customer_email: 'leaving-soon@shop.example' }));
    expect([inactiveUser.status, inactiveUser.body.code]).toEqual([409, 'CUSTOMER_INACTIVE']);
    expect([await count('job'), await count('address')]).toEqual([jobs, addresses]);
  });

  it('audits each new address of a job as POST /address audits one, and writes no address for an address_id', async () => {
    const job = await createJob(acme.as.dispatcher);
    const addressIds = (job.stops as unknown as { address_id: string }[]).map((s) => s.address_id);
    const direct = await acme.as.admin.post<{ data: { id: string } }>('/api/address', { street_address: '10 Rue de Rivoli', city: 'Paris', point: { lat: 48.8556, lng: 2.3522 } });
    type Audit = { entity_id: string; new_data: Record<string, unknown> };
    const audits = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<Audit[]>(`select entity_id, new_data from audit_record where entity_type = 'Address' and action = 'create' and entity_id in (?, ?, ?) order by entity_id`, [...addressIds, direct.body.data.id]));
    expect(audits.map((a) => a.entity_id)).toEqual([...addressIds, direct.body.data.id]);
    const withoutId = (a: Audit) => ({ ...a.new_data, id: undefined });
    expect(withoutId(audits[0]!)).toEqual(withoutId(audits[2]!));
    expect(audits[1]!.new_data).toMatchObject({ street_address: '5 Avenue Montaigne', city: 'Paris', lat: 48.8662, lng: 2.3047, formatted_name: '5 Avenue Montaigne, Paris' });
    const before = await count('address');
    const reused = await createJob(acme.as.dispatcher, { stops: [{ type: 'pickup', address_id: addressIds[0] }, { type: 'dropoff', address_id: addressIds[1] }] });
    expect((reused.stops as unknown as { address_id: string }[]).map((s) => s.address_id)).toEqual(addressIds);
    expect(await count('address')).toBe(before);
  });

  it("refuses another site's address id with 404 naming the stop field", async () => {
    const foreign = await globex.as.admin.post<{ data: { id: string } }>('/api/address', { city: 'Berlin', point: { lat: 52.5, lng: 13.4 } });
    const response = await acme.as.dispatcher.post('/api/job', jobRequest({ stops: [{ type: 'pickup', address_id: foreign.body.data.id }] }));
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ fields: [{ field: 'stops.0.address_id' }] });
  });
});

describe('moving jobs through the workflow', () => {
  it('refuses an undeclared move with 409 naming the state and allowed moves, writing nothing', async () => {
    const job = await createJob(acme.as.dispatcher);
    const before = [await count('audit_record'), await count('outbox')];
    const response = await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.completed });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ code: 'INVALID_TRANSITION', details: { current_state: { key: 'created' } } });
    expect((response.body.details as { allowed_moves: { key: string }[] }).allowed_moves.map((m) => m.key)).toEqual(['dispatched', 'cancelled']);
    expect([await count('audit_record'), await count('outbox')]).toEqual(before);
    expect((await acme.as.dispatcher.get<{ data: JobBody }>(`/api/job/${job.id}`)).body.data.version).toBe(1);
  });

  it("refuses another site's state id", async () => {
    const job = await createJob(acme.as.dispatcher);
    const theirs = await stateIds(globex.as.admin, 'job');
    const response = await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: theirs.dispatched });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'UNKNOWN_STATE_ID', fields: [{ field: 'workflow_state_id' }] });
  });

  it('applies the role column of the transition table', async () => {
    const job = await createJob(acme.as.dispatcher);
    const response = await acme.as.customer.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched });
    expect(response.status).toBe(404);
    const mine = await createJob(acme.as.customer, { customer_email: undefined });
    const denied = await acme.as.customer.post('/api/job/state', { job_id: mine.id, workflow_state_id: jobStates.dispatched });
    expect(denied.status).toBe(409);
    const cancelled = await acme.as.customer.post<{ data: JobBody }>('/api/job/state', { job_id: mine.id, workflow_state_id: jobStates.cancelled });
    expect(cancelled.body.data.phase).toBe('cancelled');
  });

  it('cancelling a job cancels its open stops, with the notes', async () => {
    const job = await createJob(acme.as.dispatcher);
    const response = await acme.as.dispatcher.post<{ data: JobBody & { cancellation_notes: string } }>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.cancelled, cancellation_notes: 'customer called' });
    expect(response.body.data.cancellation_notes).toBe('customer called');
    expect(response.body.data.stops.map((s) => s.phase)).toEqual(['cancelled', 'cancelled']);
  });

  it('dispatching a job assigns its stops; all stops done completes the job', async () => {
    const job = await createJob(acme.as.dispatcher);
    const dispatched = await acme.as.dispatcher.post<{ data: JobBody }>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched });
    expect(dispatched.body.data.stops.map((s) => s.workflow_state.key)).toEqual(['assigned', 'assigned']);
    let last: JobBody | undefined;
    for (const stop of job.stops) {
      for (const key of ['en_route', 'arrived', 'completed']) {
        const moved = await acme.as.dispatcher.post<{ data: JobBody }>('/api/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[key] });
        expect(moved.status).toBe(200);
        last = moved.body.data;
      }
    }
    expect(last!.workflow_state.key).toBe('completed');
    const timeline = await acme.as.dispatcher.get<{ data: { transitions: { to: { key: string }; role: string | null }[]; allowed_moves: unknown[] } }>(`/api/job/${job.id}/timeline`);
    expect(timeline.body.data.transitions.map((t) => t.to.key)).toEqual(['created', 'dispatched', 'in_progress', 'completed']);
    expect(timeline.body.data.transitions.map((t) => t.role)).toEqual([null, 'dispatcher', 'system', 'system']);
    expect(timeline.body.data.allowed_moves).toEqual([]);
  });

  it('returning a job sends it back to unassigned with its stops, clearing its driver in one new version', async () => {
    const job = await createJob(acme.as.dispatcher, { driver_user_id: acme.users.driver.id });
    await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched });
    const returned = await acme.as.dispatcher.post<{ data: JobBody & { driver_user_id: string | null } }>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.created });
    expect(returned.body.data).toMatchObject({ phase: 'unassigned', driver_user_id: null, version: 3 });
    expect(returned.body.data.stops.map((s) => s.phase)).toEqual(['unassigned', 'unassigned']);
    const events: { data: { driver_user_id: string | null; version: number } }[] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute(`select payload->'data' as data from outbox where entity_id = ? and event = 'job:state_change' order by seq`, [job.id]),
    );
    expect(events.at(-1)!.data).toMatchObject({ driver_user_id: null, version: 3 });
  });
});

describe('bulk operations', () => {
  it('cancels 100 ids with 10 unknown and 5 of another site: 85 succeed, 15 fail per id, the other site untouched', async () => {
    const ours = await Promise.all(Array.from({ length: 85 }, () => createJob(acme.as.dispatcher)));
    const theirs = await Promise.all(Array.from({ length: 5 }, () => createJob(globex.as.dispatcher)));
    const unknown = Array.from({ length: 10 }, (_, i) => `job_01NOTREAL${String(i).padStart(17, '0')}`);
    const ids = [...ours.map((j) => j.id), ...theirs.map((j) => j.id), ...unknown];
    const response = await acme.as.dispatcher.post<{ succeeded: string[]; failed: { id: string; code: string }[] }>('/api/job/bulk/cancel', { ids, cancellation_notes: 'storm' });
    expect(response.status).toBe(200);
    expect(response.body.succeeded.sort()).toEqual(ours.map((j) => j.id).sort());
    expect(response.body.failed).toHaveLength(15);
    expect(response.body.failed.every((f) => f.code === 'NOT_FOUND')).toBe(true);
    for (const job of theirs) {
      const mine = await globex.as.dispatcher.get<{ data: JobBody }>(`/api/job/${job.id}`);
      expect(mine.body.data).toMatchObject({ phase: 'unassigned', version: 1 });
    }
  });

  it('deletes only jobs nobody is working, and duplicates jobs with their stops', async () => {
    const idle = await createJob(acme.as.dispatcher);
    const contact = { contact_name: 'Ines', contact_phone: '+33612345678', contact_phone_country: 'FR' };
    const busy = await createJob(acme.as.dispatcher, { stops: (jobRequest().stops as Record<string, unknown>[]).map((stop) => ({ ...stop, ...contact })) });
    await acme.as.dispatcher.post('/api/job/state', { job_id: busy.id, workflow_state_id: jobStates.dispatched });
    const deleted = await acme.as.dispatcher.post<{ succeeded: string[]; failed: { id: string; code: string }[] }>('/api/job/bulk/delete', { ids: [idle.id, busy.id] });
    expect(deleted.body).toEqual({ succeeded: [idle.id], failed: [expect.objectContaining({ id: busy.id, code: 'JOB_ACTIVE' })] });
    expect((await acme.as.dispatcher.get(`/api/job/${idle.id}`)).status).toBe(404);
    const copies = await acme.as.dispatcher.post<{ succeeded: JobBody[] }>('/api/job/bulk/duplicate', { ids: [busy.id] });
    expect(copies.body.succeeded[0]).toMatchObject({ phase: 'unassigned', version: 1 });
    expect(copies.body.succeeded[0]!.stops).toHaveLength(2);
    const copied = (copies.body.succeeded[0]!.stops as Record<string, unknown>[]).map((stop) => [stop.contact_name, stop.contact_phone, stop.contact_phone_country]);
    expect(copied).toEqual([Object.values(contact), Object.values(contact)]);
  });
});

describe('visibility and editing', () => {
  it("never shows another site's job: 404 by id, absent from the list and from searches, even by its id", async () => {
    const theirs = await createJob(globex.as.dispatcher, { driver_notes: 'globex only' });
    expect((await acme.as.dispatcher.get(`/api/job/${theirs.id}`)).status).toBe(404);
    expect((await acme.as.admin.get(`/api/job/${theirs.id}`)).status).toBe(404);
    const listed = await acme.as.dispatcher.get<{ data: JobBody[] }>('/api/job?per_page=100');
    expect(listed.body.data.map((j) => j.id)).not.toContain(theirs.id);
    for (const query of [`q=${theirs.id}`, 'q=globex%20only']) {
      const found = await acme.as.dispatcher.get<{ data: JobBody[]; meta: { pagination: { totalItems: number } } }>(`/api/job/search?${query}`);
      expect([found.status, found.body.data, found.body.meta.pagination.totalItems]).toEqual([200, [], 0]);
    }
    expect((await globex.as.dispatcher.get(`/api/job/${theirs.id}`)).status).toBe(200);
  });

  it('shows customers only their own jobs and hides internal notes from them', async () => {
    const own = await createJob(acme.as.customer, { customer_email: undefined, internal_notes: 'ignored for customers' });
    const listed = await acme.as.customer.get<{ data: { id: string; customer_user_id: string; internal_notes?: unknown }[] }>('/api/job?per_page=100');
    expect(listed.body.data.map((j) => j.id)).toContain(own.id);
    expect(new Set(listed.body.data.map((j) => j.customer_user_id))).toEqual(new Set([own.customer_user_id]));
    expect(listed.body.data.every((j) => !('internal_notes' in j))).toBe(true);
    const other = await createJob(acme.as.dispatcher);
    expect((await acme.as.customer.get(`/api/job/${other.id}`)).status).toBe(404);
  });

  it('patches with three states and bumps the version', async () => {
    const job = await createJob(acme.as.dispatcher, { driver_notes: 'ring twice', customer_notes: 'leave at door' });
    const patched = await acme.as.dispatcher.send<{ data: JobBody & { driver_notes: unknown; customer_notes: unknown; internal_notes: unknown } }>('PATCH', `/api/job/${job.id}`, { driver_notes: null, internal_notes: 'vip' });
    expect(patched.body.data).toMatchObject({ driver_notes: null, customer_notes: 'leave at door', internal_notes: 'vip', version: 2 });
  });

  it("rewords a stop's address in a job or stop update (a new address at the same point; the old one unchanged)", async () => {
    type Address = { id: string; street_address: string | null; street_address2: string | null; city: string | null; point: { lat: number; lng: number } };
    type WithAddresses = { data: { stops: { id: string; address_id: string; address: Address }[] } };
    const job = await createJob(acme.as.customer, { customer_email: undefined });
    const [pickup, dropoff] = (await acme.as.dispatcher.get<WithAddresses>(`/api/job/${job.id}`)).body.data.stops;
    const patched = await acme.as.customer.send<WithAddresses>('PATCH', `/api/job/${job.id}`, { stops: [{ id: pickup!.id, street_address2: 'Apt 4, 2nd floor', city: null }] });
    expect(patched.status).toBe(200);
    const reworded = patched.body.data.stops[0]!.address;
    expect(reworded).toMatchObject({ street_address: pickup!.address.street_address, street_address2: 'Apt 4, 2nd floor', city: null, point: pickup!.address.point });
    expect(reworded.id).not.toBe(pickup!.address_id);
    expect((await acme.as.dispatcher.get<{ data: Address }>(`/api/address?id=${pickup!.address_id}`)).body.data).toMatchObject({ street_address2: null, city: 'Paris' });

    const stop = await acme.as.dispatcher.put<{ data: { address: Address } }>('/api/stop', { id: dropoff!.id, street_address: '7 Avenue Montaigne' });
    expect(stop.body.data.address).toMatchObject({ street_address: '7 Avenue Montaigne', city: 'Paris', point: dropoff!.address.point });
    const both = await acme.as.dispatcher.put<{ code: string; fields: { field: string }[] }>('/api/stop', { id: dropoff!.id, street_address: '9 Avenue Montaigne', address_id: pickup!.address_id });
    expect([both.status, both.body.code, both.body.fields[0]!.field]).toEqual([400, 'ADDRESS_AMBIGUOUS', 'address_id']);
  });

  it('refuses a new stop that gives address_id and inline address fields (which it would drop), naming it, and creates nothing', async () => {
    const stored = await acme.as.admin.post<{ data: { id: string } }>('/api/address', { city: 'Lyon', point: { lat: 45.76, lng: 4.83 } });
    const email = 'ambiguous-stop@example.com';
    for (const inline of [{ street_address: '9 Avenue Montaigne', city: 'Paris' }, { point: { lat: 48.86, lng: 2.3 } }]) {
      const stops = [{ type: 'pickup', city: 'Paris', point: { lat: 48.85, lng: 2.35 } }, { type: 'dropoff', address_id: stored.body.data.id, ...inline }];
      const refused = await acme.as.dispatcher.post<{ code: string; fields: { field: string }[] }>('/api/job', { customer_email: email, stops });
      expect([refused.status, refused.body.code, refused.body.fields[0]!.field]).toEqual([400, 'ADDRESS_AMBIGUOUS', 'stops.1.address_id']);
    }
    expect((await acme.as.dispatcher.get<{ data: unknown[] }>(`/api/customer/search?q=${email}`)).body.data).toEqual([]);
  });

  it('searches by workflow state and phase, with the search meta', async () => {
    const response = await acme.as.dispatcher.get<{ data: JobBody[]; meta: { pagination: { totalItems: number } } }>(`/api/job/search?workflow_state_ids=${jobStates.cancelled}&page_size=5`);
    expect(response.body.data.every((j) => j.workflow_state_id === jobStates.cancelled)).toBe(true);
    expect(response.body.meta.pagination.totalItems).toBeGreaterThanOrEqual(85);
    const byPhase = await acme.as.dispatcher.get<{ data: JobBody[] }>('/api/job/search?phase=assigned');
    expect(byPhase.body.data.length).toBeGreaterThan(0);
    expect(byPhase.body.data.every((j) => j.phase === 'assigned')).toBe(true);
  });
});

describe('workflows', () => {
  it('writes a new version that new jobs use while running jobs keep theirs; refuses broken ones with every reason', async () => {
    const running = await createJob(acme.as.dispatcher);
    const current = await acme.as.admin.get<{ data: { version: number; states: Record<string, unknown>[]; transitions: Record<string, unknown>[] } }>('/api/workflow?entity_type=job');
    const states = [...current.body.data.states, { key: 'on_hold', name: 'On hold', phase: 'unassigned', is_initial: false, is_terminal: false }];
    const transitions = [...current.body.data.transitions, { from: 'created', to: 'on_hold' }, { from: 'on_hold', to: 'created' }];
    const updated = await acme.as.admin.put<{ data: { version: number } }>('/api/workflow', { entity_type: 'job', states, transitions });
    expect(updated.body.data.version).toBe(current.body.data.version + 1);
    const fresh = await createJob(acme.as.dispatcher);
    const states2 = await stateIds(acme.as.admin, 'job');
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: fresh.id, workflow_state_id: states2.on_hold })).status).toBe(200);
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: running.id, workflow_state_id: states2.on_hold })).status).toBe(400);
    const broken = await acme.as.admin.put('/api/workflow', {
      entity_type: 'job',
      states: [{ key: 'a', name: 'A', phase: 'unassigned', is_initial: false, is_terminal: false }, { key: 'b', name: 'B', phase: 'completed', is_initial: false, is_terminal: true }],
      transitions: [{ from: 'b', to: 'a' }],
    });
    expect(broken.status).toBe(400);
    for (const reason of ['no state is initial', 'terminal state b has an outgoing move', 'phase assigned has no state']) expect(String(broken.body.error)).toContain(reason);
  });

  it('refuses a workflow that keeps one state id twice, or whose move names an unknown state, naming the field, and writes no version', async () => {
    type Current = { data: { version: number; states: { id: string; key: string }[]; transitions: { from: string; to: string }[] } };
    const current = (await acme.as.admin.get<Current>('/api/workflow?entity_type=route')).body.data;
    const states = current.states.map((state, i) => (i === 1 ? { ...state, id: current.states[0]!.id } : state));
    const twice = await acme.as.admin.put<{ code: string; fields: { field: string }[] }>('/api/workflow', { entity_type: 'route', states, transitions: current.transitions });
    expect([twice.status, twice.body.code, twice.body.fields.map((f) => f.field)]).toEqual([400, 'INVALID_WORKFLOW', ['states.1.id']]);
    const transitions = [...current.transitions, { from: current.states[0]!.key, to: 'nowhere' }];
    const unknown = await acme.as.admin.put<{ code: string; fields: { field: string }[] }>('/api/workflow', { entity_type: 'route', states: current.states, transitions });
    expect([unknown.status, unknown.body.code, unknown.body.fields.map((f) => f.field)]).toEqual([400, 'INVALID_WORKFLOW', [`transitions.${current.transitions.length}.to`]]);
    const after = (await acme.as.admin.get<Current>('/api/workflow?entity_type=route')).body.data;
    expect([after.version, after.states.map((s) => s.id)]).toEqual([current.version, current.states.map((s) => s.id)]);
  });
});
