import { beforeAll, describe, expect, it } from 'vitest';
import { isOnSchedule } from '../../engine/fleet/schedule.ts';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { recording, transactionWith } from '../support/pg-recording.ts';
import { type SiteFixture } from '../support/fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T = Record<string, unknown>> = { data: T };
type Many<T = Record<string, unknown>> = { data: T[]; meta: { pagination: { totalItems: number } } };
type Failure = { code: string; fields?: { field: string }[] };
type Worker = {
  id: string; email: string; first_name: string | null; phone: string | null; default_vehicle_id: string | null;
  team_ids: string[]; zone_ids: string[]; skills: string[]; operational_status: string; max_load: number | null; notes: string | null;
};
type Schedule = { worker_id: string; timezone: string; weekly: { day_of_week: number; start_time: string; end_time: string }[]; exceptions: { date: string; off?: boolean }[]; updated_at: string | null };

const sites = useTwoSites();
let fleet: { vehicle: string; teamA: string; teamB: string; zone: string; foreignVehicle: string };

beforeAll(async () => {
  fleet = {
    vehicle: await insertFleetRow(sites.acme, 'vehicle'),
    teamA: await insertFleetRow(sites.acme, 'team'),
    teamB: await insertFleetRow(sites.acme, 'team'),
    zone: await insertFleetRow(sites.acme, 'zone'),
    foreignVehicle: await insertFleetRow(sites.globex, 'vehicle'),
  };
});

describe('workers', () => {
  it('makes an existing driver a worker, and creates a new driver from inline user fields', async () => {
    const existing = await sites.acme.as.admin.post<One<Worker>>('/api/worker', { user_id: sites.acme.users.driver.id, skills: ['forklift'], team_ids: [fleet.teamA] });
    expect(existing.status).toBe(201);
    expect(existing.body.data).toMatchObject({ id: sites.acme.users.driver.id, email: sites.acme.users.driver.email, skills: ['forklift'], team_ids: [fleet.teamA], zone_ids: [], operational_status: 'active', default_vehicle_id: null });
    expect((await sites.acme.as.admin.post<Failure>('/api/worker', { user_id: sites.acme.users.driver.id })).body.code).toBe('WORKER_EXISTS');

    const password = 'new-driver-secret';
    const inline = await sites.acme.as.dispatcher.post<One<Worker>>('/api/worker', {
      email: 'Nina.Driver@example.com', first_name: 'Nina', last_name: 'Road', phone: '+33611111111', password, default_vehicle_id: fleet.vehicle, max_load: 40,
    });
    expect(inline.status).toBe(201);
    expect(inline.body.data).toMatchObject({ email: 'nina.driver@example.com', first_name: 'Nina', phone: '+33611111111', default_vehicle_id: fleet.vehicle, max_load: 40 });
    const user = await sites.acme.as.admin.get<One<{ profiles: { role: string }[] }>>(`/api/user?id=${inline.body.data.id}`);
    expect(user.body.data.profiles.map((p) => p.role)).toEqual(['driver']);
    const audit = await sites.acme.as.admin.get<Many<{ entity_type: string; action: string }>>(`/api/audit/search?entity_id=${inline.body.data.id}`);
    expect(audit.body.data.map((r) => r.entity_type).sort()).toEqual(['User', 'Worker']);
    expect(audit.text).not.toContain(password);
  });

  it('reads a worker and updates the details with three-state fields, audited', async () => {
    const { id } = await newWorker('ada', { notes: 'Prefers mornings', zone_ids: [fleet.zone], max_load: 10, default_vehicle_id: fleet.vehicle });
    expect((await sites.acme.as.dispatcher.get<One<Worker>>(`/api/worker?id=${id}`)).body.data).toMatchObject({ id, notes: 'Prefers mornings', zone_ids: [fleet.zone] });
    const updated = await sites.acme.as.dispatcher.put<One<Worker>>('/api/worker', { id, notes: null, zone_ids: null, skills: ['ladder'], operational_status: 'suspended' });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ notes: null, zone_ids: [], skills: ['ladder'], operational_status: 'suspended', max_load: 10, default_vehicle_id: fleet.vehicle });
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=Worker&entity_id=${id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update']);
  });

  it('searches by name, team, zone, skill, status and whether a vehicle is set', async () => {
    const vera = await newWorker('vera', { team_ids: [fleet.teamA, fleet.teamB], zone_ids: [fleet.zone], skills: ['fridge', 'van'], default_vehicle_id: fleet.vehicle });
    const otto = await newWorker('otto', { team_ids: [fleet.teamB], skills: ['vans'], operational_status: 'inactive' });
    await sites.globex.as.admin.post('/api/worker', { email: 'vera.globex@example.com', first_name: 'vera' });
    const ids = async (query: string) => (await sites.acme.as.admin.get<Many<Worker>>(`/api/worker/search?per_page=100&${query}`)).body.data.map((w) => w.id);
    expect(await ids('q=VERA')).toEqual([vera.id]);
    expect(await ids(`team_id=${fleet.teamB}&sort=created_at`)).toEqual([vera.id, otto.id]);
    expect(await ids(`zone_id=${fleet.zone}&q=vera`)).toEqual([vera.id]);
    expect(await ids('skill=van')).toEqual([vera.id]);
    expect(await ids('operational_status=inactive')).toEqual([otto.id]);
    expect(await ids('has_vehicle=true&q=vera')).toEqual([vera.id]);
    expect(await ids('has_vehicle=false&q=otto')).toEqual([otto.id]);
    expect(await ids('has_vehicle=false&q=vera')).toEqual([]);
    expect((await sites.acme.as.admin.get('/api/worker/search?sort=-name')).status).toBe(400);
  });

  it('pages and sorts the search, shows each worker as GET /worker does, and answers in one round trip', async () => {
    const suspended = await newWorker('pager1', { skills: ['pager'], team_ids: [fleet.teamA], operational_status: 'suspended' });
    const active = await newWorker('pager2', { skills: ['pager'], max_load: 7, notes: 'Night shifts' });
    const inactive = await newWorker('pager3', { skills: ['pager'], operational_status: 'inactive', default_vehicle_id: fleet.vehicle });
    const pages = [await search('per_page=2&sort=created_at'), await search('per_page=2&page=2&sort=created_at'), await search('per_page=2&page=3')];
    expect(pages.map((page) => page.data.map((w) => w.id))).toEqual([[suspended.id, active.id], [inactive.id], []]);
    expect(pages.map((page) => page.meta.pagination.totalItems)).toEqual([3, 3, 3]);
    expect((await search('sort=-operational_status')).data.map((w) => w.id)).toEqual([suspended.id, inactive.id, active.id]);
    const found = (await search('sort=created_at')).data;
    const got = await Promise.all(found.map(async (w) => (await sites.acme.as.admin.get<One<Worker>>(`/api/worker?id=${w.id}`)).body.data));
    expect(found).toEqual(got);

    const sent = await recording(async () => {
      expect((await search(`team_id=${fleet.teamA}`)).data.map((w) => w.id)).toEqual([suspended.id]);
    });
    const transaction = transactionWith(sent, fleet.teamA);
    expect(transaction).toHaveLength(1);
    expect(transaction[0]).toMatch(/^begin;.*; commit$/s);
  });

  it("keeps other sites' workers and fleet ids out, and names the field at fault", async () => {
    const foreign = await sites.globex.as.admin.post<One<Worker>>('/api/worker', { user_id: sites.globex.users.driver.id });
    expect((await sites.acme.as.admin.get(`/api/worker?id=${foreign.body.data.id}`)).status).toBe(404);
    expect((await sites.acme.as.admin.put('/api/worker', { id: foreign.body.data.id, notes: 'x' })).status).toBe(404);
    await expectFieldError(sites.acme.as.admin.post('/api/worker', { user_id: sites.globex.users.driver.id }), 404, 'user_id');
    await expectFieldError(sites.acme.as.admin.post('/api/worker', { user_id: sites.acme.users.dispatcher.id }), 404, 'user_id');
    await expectFieldError(sites.acme.as.admin.post('/api/worker', { first_name: 'Nobody' }), 400, 'user_id');
    await expectFieldError(sites.acme.as.admin.post('/api/worker', { user_id: sites.acme.users.driver.id, first_name: 'Renamed' }), 400, 'user_id');
    await expectFieldError(sites.acme.as.admin.post('/api/worker', { email: 'x1@example.com', default_vehicle_id: fleet.foreignVehicle }), 404, 'default_vehicle_id');
    await expectFieldError(sites.acme.as.admin.post('/api/worker', { email: 'x2@example.com', team_ids: [fleet.teamA, 'team_missing'] }), 404, 'team_ids');
    // The references are checked in one statement; a valid vehicle does not hide a missing team, and with both missing the vehicle is named.
    await expectFieldError(sites.acme.as.admin.post('/api/worker', { email: 'x3@example.com', default_vehicle_id: fleet.vehicle, team_ids: ['team_missing'] }), 404, 'team_ids');
    await expectFieldError(sites.acme.as.admin.post('/api/worker', { email: 'x4@example.com', default_vehicle_id: fleet.foreignVehicle, team_ids: ['team_missing'] }), 404, 'default_vehicle_id');
    await expectFieldError(sites.acme.as.admin.put('/api/worker', { id: sites.acme.users.driver.id, zone_ids: ['zone_missing'] }), 404, 'zone_ids');
    const users = await sites.acme.as.admin.get<Many>('/api/user/search?q=x1@example.com');
    expect(users.body.meta.pagination.totalItems).toBe(0);
  });

  it('lets only admins and dispatchers read and manage workers', async () => {
    for (const role of ['driver', 'customer'] as const) {
      expect((await sites.acme.as[role].get(`/api/worker?id=${sites.acme.users.driver.id}`)).status).toBe(403);
      expect((await sites.acme.as[role].get('/api/worker/search')).status).toBe(403);
      expect((await sites.acme.as[role].post('/api/worker', { email: 'x3@example.com' })).status).toBe(403);
    }
  });
});

describe('worker schedules', () => {
  it('replaces the weekly slots and exceptions, and isOnSchedule reads them in the site timezone', async () => {
    const { id } = await newWorker('sam');
    const empty = await sites.acme.as.dispatcher.get<One<Schedule>>(`/api/worker/schedule?worker_id=${id}`);
    expect(empty.body.data).toMatchObject({ worker_id: id, timezone: sites.acme.site.timezone, weekly: null, exceptions: [], updated_at: null });
    const replaced = await sites.acme.as.dispatcher.put<One<Schedule>>('/api/worker/schedule', {
      worker_id: id,
      weekly: [{ day_of_week: 3, start_time: '13:00', end_time: '17:00' }, { day_of_week: 3, start_time: '08:00', end_time: '12:00' }],
      exceptions: [{ date: '2026-01-14', off: true }],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.weekly.map((s) => s.start_time)).toEqual(['08:00', '13:00']);
    const read = (await sites.acme.as.admin.get<One<Schedule>>(`/api/worker/schedule?worker_id=${id}`)).body.data;
    expect(read).toEqual(replaced.body.data);
    // Wednesdays in January 2026; the fixture site runs on UTC.
    expect(isOnSchedule(read, read.timezone, new Date('2026-01-07T09:00:00Z'))).toBe(true);
    expect(isOnSchedule(read, read.timezone, new Date('2026-01-07T12:30:00Z'))).toBe(false);
    expect(isOnSchedule(read, read.timezone, new Date('2026-01-14T09:00:00Z'))).toBe(false);
    await sites.acme.as.dispatcher.put('/api/worker/schedule', { worker_id: id, weekly: [], exceptions: [] });
    expect((await sites.acme.as.admin.get<One<Schedule>>(`/api/worker/schedule?worker_id=${id}`)).body.data.weekly).toEqual([]);
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=WorkerSchedule&entity_id=${id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update']);
  });

  it('keeps a schedule without a week (weekly: null): only its exceptions restrict, and removing it lifts every restriction, audited', async () => {
    const { id } = await newWorker('noa');
    const replaced = await sites.acme.as.dispatcher.put<One<Schedule>>('/api/worker/schedule', {
      worker_id: id, weekly: null, exceptions: [{ date: '2026-01-14', off: true }, { date: '2026-01-15', slots: [{ start_time: '09:00', end_time: '12:00' }] }],
    });
    expect([replaced.status, replaced.body.data.weekly]).toEqual([200, null]);
    const read = (await sites.acme.as.admin.get<One<Schedule>>(`/api/worker/schedule?worker_id=${id}`)).body.data;
    expect(read).toEqual(replaced.body.data);
    expect(isOnSchedule(read, read.timezone, new Date('2026-01-13T22:00:00Z'))).toBe(true);
    expect(isOnSchedule(read, read.timezone, new Date('2026-01-14T09:00:00Z'))).toBe(false);
    expect(isOnSchedule(read, read.timezone, new Date('2026-01-15T10:00:00Z'))).toBe(true);
    expect(isOnSchedule(read, read.timezone, new Date('2026-01-15T13:00:00Z'))).toBe(false);

    expect((await sites.acme.as.driver.send('DELETE', `/api/worker/schedule?worker_id=${id}`)).status).toBe(403);
    const removed = await sites.acme.as.dispatcher.send<One<{ id: string; deleted: boolean }>>('DELETE', `/api/worker/schedule?worker_id=${id}`);
    expect([removed.status, removed.body.data]).toEqual([200, { id, deleted: true }]);
    const after = (await sites.acme.as.admin.get<One<Schedule>>(`/api/worker/schedule?worker_id=${id}`)).body.data;
    expect(after).toMatchObject({ weekly: null, exceptions: [], updated_at: null });
    // Removing a schedule the worker no longer has changes nothing and writes nothing.
    expect((await sites.acme.as.dispatcher.send('DELETE', `/api/worker/schedule?worker_id=${id}`)).status).toBe(200);
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=WorkerSchedule&entity_id=${id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'delete']);
    await expectFieldError(sites.acme.as.admin.send('DELETE', `/api/worker/schedule?worker_id=${sites.acme.users.dispatcher.id}`), 404, 'worker_id');
  });

  it('refuses invalid schedules naming the field, and schedules of non-workers', async () => {
    const { id } = await newWorker('lea');
    const put = (body: Record<string, unknown>) => sites.acme.as.admin.put('/api/worker/schedule', { worker_id: id, weekly: [], exceptions: [], ...body });
    await expectFieldError(put({ weekly: [{ day_of_week: 1, start_time: '12:00', end_time: '09:00' }] }), 400, 'weekly.0.end_time');
    await expectFieldError(put({ weekly: [{ day_of_week: 1, start_time: '08:00', end_time: '12:00' }, { day_of_week: 1, start_time: '11:00', end_time: '13:00' }] }), 400, 'weekly.1.start_time');
    await expectFieldError(put({ exceptions: [{ date: '2026-01-14' }] }), 400, 'exceptions.0.slots');
    expect((await put({ weekly: [{ day_of_week: 7, start_time: '08:00', end_time: '09:00' }] })).status).toBe(400);
    expect((await put({ weekly: [{ day_of_week: 1, start_time: '8:00', end_time: '09:00' }] })).status).toBe(400);
    const tooMany = Array.from({ length: 85 }, () => ({ day_of_week: 1, start_time: '08:00', end_time: '09:00' }));
    expect((await put({ weekly: tooMany })).status).toBe(400);
    await expectFieldError(sites.acme.as.admin.get(`/api/worker/schedule?worker_id=${sites.acme.users.dispatcher.id}`), 404, 'worker_id');
    const foreign = await sites.globex.as.admin.post<One<Worker>>('/api/worker', { email: 'lea.globex@example.com' });
    await expectFieldError(sites.acme.as.admin.put('/api/worker/schedule', { worker_id: foreign.body.data.id, weekly: [], exceptions: [] }), 404, 'worker_id');
    expect((await sites.acme.as.driver.get(`/api/worker/schedule?worker_id=${id}`)).status).toBe(403);
  });
});

/** A new driver made a worker of acme through the API. */
/** The search among the workers of the paging test (skill `pager`), with more parameters. */
async function search(query: string): Promise<Many<Worker>> {
  return (await sites.acme.as.admin.get<Many<Worker>>(`/api/worker/search?skill=pager&${query}`)).body;
}

async function newWorker(name: string, details: Record<string, unknown> = {}): Promise<Worker> {
  const response = await sites.acme.as.admin.post<One<Worker>>('/api/worker', { email: `${name}@acme-drivers.example`, first_name: name, ...details });
  if (response.status !== 201) throw new Error(`worker ${name}: ${response.status} ${response.text}`);
  return response.body.data;
}

async function expectFieldError(pending: Promise<{ status: number; body: unknown }>, status: number, field: string): Promise<void> {
  const response = await pending;
  expect(response.status).toBe(status);
  expect((response.body as Failure).fields?.map((f) => f.field)).toContain(field);
}

/** A fleet row written by SQL in the site's tenant transaction, so worker tests do not depend on the fleet API. */
async function insertFleetRow(site: SiteFixture, table: 'vehicle' | 'team' | 'zone'): Promise<string> {
  const id = newId(table);
  const sql = {
    vehicle: `insert into vehicle (id, site_id, name, type, created_at, updated_at) values (?, ?, 'Van 1', 'van', now(), now())`,
    team: `insert into team (id, site_id, name, created_at, updated_at) values (?, ?, 'North', now(), now())`,
    zone: `insert into zone (id, site_id, name, kind, geometry, created_at, updated_at) values (?, ?, 'Centre', 'service', '{}', now(), now())`,
  }[table];
  await inTenantScope(sites.server.services.db.orm, { siteId: site.site.id }, (em) => em.execute(sql, [id, site.site.id]));
  return id;
}
