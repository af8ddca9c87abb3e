import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { waitFor } from '../support/wait-for.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { createDriver, createTeam, createVehicle, jobAt } from './dispatch-fixtures.ts';

type One<T = Record<string, unknown>> = { data: T };
type Decision = {
  strategy: string; tie_rule: string; candidates: { driver_id: string; eta_minutes: number | null; load: number; rank: number }[]; exclusions: { driver_id: string; reason: string }[];
  excluded_by_reason?: Record<string, number>; winner: { driver_id: string } | null;
};
type Dispatch = { id: string; job_id: string; route_id: string | null; status: string; method: string; driver_accepted: boolean; driver_accepted_at: string | null; assigned_to_driver_id: string | null; assigned_to_vehicle_id: string | null; team_id: string | null; decision: Decision | null };
type Outcome = { dispatch: Dispatch; job: { id: string; phase: string; driver_user_id: string | null; route_id: string | null; workflow_state: { key: string } } | null; route: { id: string; phase: string; driver_user_id: string } | null };
type TeamOutcome = Outcome & { selected_driver_id: string; selection_strategy: string };
type Failure = { code: string; fields?: { field: string }[]; details?: { decision?: Decision } };
type Entry = { available: boolean; unavailable_reason: string | null; eta_to_job: { duration_minutes: number } | null; driver: { id: string; email: string } };

const PARIS = { lat: 48.8566, lng: 2.3522 };
const near = (km: number) => ({ lat: PARIS.lat + km / 111, lng: PARIS.lng });
const stop = (type: string, point: { lat: number; lng: number }) => ({ type, street_address: '1 Test Street', city: 'Paris', point });

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
let vehicle: string;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
  vehicle = await createVehicle(acme);
}, 60_000);
afterAll(() => server.close());

describe('manual assignment (POST /dispatch/assign)', () => {
  it('needs a vehicle: none supplied and no default is 422 VEHICLE_REQUIRED, and nothing changes', async () => {
    const driver = await createDriver(server, acme, { name: 'No Van', at: near(1) });
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const refused = await acme.as.dispatcher.post<Failure>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('VEHICLE_REQUIRED');
    expect((await acme.as.admin.get<One<{ phase: string }>>(`/api/job/${job.id}`)).body.data.phase).toBe('unassigned');
    const withVehicle = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id, vehicle_id: vehicle });
    expect(withVehicle.status).toBe(200);
    expect(withVehicle.body.data.dispatch.assigned_to_vehicle_id).toBe(vehicle);
    expect(withVehicle.body.data.job).toEqual((await acme.as.dispatcher.get<One>(`/api/job/${job.id}`)).body.data);
  });

  it("ends the driver's dispatch when they return the job, so it can be offered again", async () => {
    const driver = await createDriver(server, acme, { name: 'Return Rae', at: near(1), vehicleId: vehicle });
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const assigned = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id });
    expect(assigned.body.data.dispatch).toMatchObject({ status: 'processing' });
    expect((await driver.client.post('/api/driver/job/return', { job_id: job.id })).status).toBe(200);
    const ended = await acme.as.dispatcher.get<One<Dispatch & { is_active: boolean }>>(`/api/dispatch?id=${assigned.body.data.dispatch.id}`);
    expect(ended.body.data.is_active).toBe(false);
    const audit = await acme.as.admin.get<One<{ action: string }[]>>(`/api/audit/search?entity_id=${assigned.body.data.dispatch.id}`);
    expect(audit.body.data.map((r) => r.action)).toContain('return');
    const offered = await acme.as.dispatcher.post<One<{ succeeded: { job_id: string }[]; failed: unknown[] }>>('/api/dispatch/pool', { job_ids: [job.id] });
    expect([offered.status, offered.body.data.succeeded.map((d) => d.job_id), offered.body.data.failed]).toEqual([200, [job.id], []]);
  });

  it('names the driver a job was created for when it is dispatched to another (previous_driver_user_id), so they hear of it', async () => {
    const meant = await createDriver(server, acme, { name: 'Meant Mia', at: near(1), vehicleId: vehicle });
    const taker = await createDriver(server, acme, { name: 'Taker Tom', at: near(1), vehicleId: vehicle });
    const job = await createJob(acme.as.dispatcher, { driver_user_id: meant.id });
    const assigned = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: job.id, driver_id: taker.id });
    expect(assigned.status).toBe(200);
    const events = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<{ payload: { data: { driver_user_id: string; previous_driver_user_id?: string } } }[]>("select payload from outbox where entity_id = ? and event = 'job:state_change'", [job.id]),
    );
    expect(events.map((e) => [e.payload.data.driver_user_id, e.payload.data.previous_driver_user_id])).toEqual([[taker.id, meant.id]]);
    // Dispatched to the driver it was created for: nobody was passed over.
    const own = await createJob(acme.as.dispatcher, { driver_user_id: meant.id });
    expect((await acme.as.dispatcher.post('/api/dispatch/assign', { job_id: own.id, driver_id: meant.id })).status).toBe(200);
    const [ownEvent] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute<{ payload: { data: Record<string, unknown> } }[]>("select payload from outbox where entity_id = ? and event = 'job:state_change'", [own.id]),
    );
    expect(ownEvent!.payload.data).not.toHaveProperty('previous_driver_user_id');
  });

  it("assigns with the driver's default vehicle into their open route of the day; not an acceptance; audited with job:state_change", async () => {
    const driver = await createDriver(server, acme, { name: 'Manual Mo', at: near(1), vehicleId: vehicle });
    const first = await jobAt(acme.as.dispatcher, PARIS);
    const second = await jobAt(acme.as.dispatcher, PARIS);
    const a = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: first.id, driver_id: driver.id, method: 'manual' });
    expect(a.status).toBe(200);
    const { dispatch, job, route } = a.body.data;
    expect(dispatch).toMatchObject({ status: 'processing', method: 'manual', driver_accepted: false, driver_accepted_at: null, assigned_to_driver_id: driver.id, assigned_to_vehicle_id: vehicle });
    expect(dispatch.decision).toMatchObject({ strategy: 'manual', winner: { driver_id: driver.id } });
    expect(job).toMatchObject({ phase: 'assigned', driver_user_id: driver.id, route_id: route!.id });
    expect(route).toMatchObject({ driver_user_id: driver.id, phase: 'assigned' });
    const b = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: second.id, driver_id: driver.id });
    expect(b.body.data.route!.id).toBe(route!.id);
    // Twice is a conflict: the job is no longer unassigned.
    expect((await acme.as.dispatcher.post<Failure>('/api/dispatch/assign', { job_id: first.id, driver_id: driver.id })).body.code).toBe('JOB_NOT_UNASSIGNED');

    const facts = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, async (em) => ({
      events: await em.execute<{ event: string }[]>("select event from outbox where entity_id in (?, ?) order by seq", [first.id, dispatch.id]),
      audits: await em.execute<{ action: string; entity_type: string }[]>('select action, entity_type from audit_record where entity_id in (?, ?)', [first.id, dispatch.id]),
    }));
    expect(facts.events.map((e) => e.event)).toEqual(expect.arrayContaining(['job:state_change', 'dispatch:created']));
    expect(facts.audits).toEqual(expect.arrayContaining([{ action: 'state_change', entity_type: 'Job' }, { action: 'create', entity_type: 'Dispatch' }]));
  });

  it('joins the given route_id instead of the open route', async () => {
    const driver = await createDriver(server, acme, { name: 'Route Ruth', at: near(1), vehicleId: vehicle });
    const route = await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Special', service_date: '2030-01-02' });
    expect(route.status).toBe(201);
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const done = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id, route_id: route.body.data.id });
    expect(done.body.data.job!.route_id).toBe(route.body.data.id);
    expect(done.body.data.dispatch.route_id).toBe(route.body.data.id);
  });

  it("answers a driver's acceptance without how colleagues were ranked; staff still see the whole decision", async () => {
    const team = await createTeam(acme, 'Ranked team');
    const drivers = [
      await createDriver(server, acme, { name: 'Ranked Ria', at: near(1), vehicleId: vehicle, teamIds: [team] }),
      await createDriver(server, acme, { name: 'Ranked Rob', at: near(3), vehicleId: vehicle, teamIds: [team] }),
    ];
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const sent = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/team/job', { job_id: job.id, team_id: team, require_confirmation: true });
    expect(sent.status).toBe(200);
    const { id, assigned_to_driver_id: winnerId } = sent.body.data.dispatch;
    const winner = drivers.find((d) => d.id === winnerId)!;
    const accepted = await winner.client.post<One<{ decision: Record<string, unknown> }>>('/api/dispatch/accept', { dispatch_id: id });
    expect(accepted.status).toBe(200);
    expect(Object.keys(accepted.body.data.decision).sort()).toEqual(['strategy', 'winner']);
    const staff = await acme.as.dispatcher.get<One<Dispatch>>(`/api/dispatch?id=${id}`);
    expect(staff.body.data.decision!.candidates.length).toBe(2);
  });

  it('with require_confirmation stays pending until that driver accepts; acceptance is recorded on the dispatch', async () => {
    const driver = await createDriver(server, acme, { name: 'Confirm Cy', at: near(1), vehicleId: vehicle });
    const other = await createDriver(server, acme, { name: 'Other Olu', at: near(1), vehicleId: vehicle });
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const sent = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id, require_confirmation: true });
    expect(sent.body.data.dispatch).toMatchObject({ status: 'pending', driver_accepted: false });
    const id = sent.body.data.dispatch.id;
    expect((await other.client.post('/api/dispatch/accept', { dispatch_id: id })).status).toBe(404);
    expect((await acme.as.dispatcher.post('/api/dispatch/accept', { dispatch_id: id })).status).toBe(403);
    const accepted = await driver.client.post<One<Dispatch>>('/api/dispatch/accept', { dispatch_id: id });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({ status: 'processing', driver_accepted: true });
    expect(accepted.body.data.driver_accepted_at).not.toBeNull();
    expect((await acme.as.admin.get<One<{ workflow_state: { key: string } }>>(`/api/job/${job.id}`)).body.data.workflow_state.key).toBe('accepted');
    // Accepting again (a retry) answers the record as it is.
    const again = await driver.client.post<One<Dispatch>>('/api/dispatch/accept', { dispatch_id: id });
    expect([again.status, again.body.data]).toEqual([200, accepted.body.data]);
  });

  it('refuses a job in a banned zone without a staff override, and dispatches a dispatcher\'s overridden one', async () => {
    const driver = await createDriver(server, acme, { name: 'Zone Zed', at: near(1), vehicleId: vehicle });
    const spot = { lat: 48.5, lng: 2.5 };
    const plain = await jobAt(acme.as.dispatcher, spot);
    const zone = await acme.as.admin.post<One<{ id: string }>>('/api/zone', {
      name: 'Closed works', kind: 'banned', geometry: { type: 'Polygon', coordinates: [[[2.49, 48.49], [2.51, 48.49], [2.51, 48.51], [2.49, 48.51], [2.49, 48.49]]] },
    });
    const refused = await acme.as.dispatcher.post<Failure>('/api/dispatch/assign', { job_id: plain.id, driver_id: driver.id });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('ZONE_RESTRICTED');
    const customerTry = await acme.as.customer.post<Failure>('/api/job', { customer_email: undefined, stops: [{ type: 'pickup', street_address: 'x', city: 'y', point: spot }, { type: 'dropoff', street_address: 'x', city: 'y', point: PARIS }], override_zone_restriction: true });
    expect(customerTry.body.code).toBe('ZONE_RESTRICTED');
    const overridden = await createJob(acme.as.dispatcher, { stops: [{ type: 'pickup', street_address: 'x', city: 'y', point: spot }, { type: 'dropoff', street_address: 'x', city: 'y', point: PARIS }], override_zone_restriction: true });
    expect((await acme.as.dispatcher.post('/api/dispatch/assign', { job_id: overridden.id, driver_id: driver.id })).status).toBe(200);
    await acme.as.admin.put('/api/zone', { id: zone.body.data.id, is_active: false });
  });

  it('an override flag that went past no zone does not exempt the job from a banned zone drawn later', async () => {
    const driver = await createDriver(server, acme, { name: 'Later Lou', at: near(1), vehicleId: vehicle });
    const spot = { lat: 48.6, lng: 2.6 };
    const flagged = await createJob(acme.as.dispatcher, { stops: [stop('pickup', spot), stop('dropoff', PARIS)], override_zone_restriction: true });
    const zone = await acme.as.admin.post<One<{ id: string }>>('/api/zone', {
      name: 'Later works', kind: 'banned', geometry: { type: 'Polygon', coordinates: [[[2.59, 48.59], [2.61, 48.59], [2.61, 48.61], [2.59, 48.61], [2.59, 48.59]]] },
    });
    const refused = await acme.as.dispatcher.post<Failure>('/api/dispatch/assign', { job_id: flagged.id, driver_id: driver.id });
    expect([refused.status, refused.body.code]).toEqual([422, 'ZONE_RESTRICTED']);
    expect((await acme.as.admin.get<One<{ phase: string }>>(`/api/job/${flagged.id}`)).body.data.phase).toBe('unassigned');
    await acme.as.admin.put('/api/zone', { id: zone.body.data.id, is_active: false });
  });

  it('keeps sites apart: another site cannot read or dispatch acme records', async () => {
    const driver = await createDriver(server, acme, { name: 'Tenant Tia', at: near(1), vehicleId: vehicle });
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const done = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id });
    expect((await globex.as.admin.get(`/api/dispatch?id=${done.body.data.dispatch.id}`)).status).toBe(404);
    const globexJob = await jobAt(globex.as.dispatcher, PARIS);
    expect((await globex.as.dispatcher.post('/api/dispatch/assign', { job_id: globexJob.id, driver_id: driver.id, vehicle_id: vehicle })).status).toBe(404);
    expect((await acme.as.dispatcher.post('/api/dispatch/assign', { job_id: globexJob.id, driver_id: driver.id })).status).toBe(404);
    const search = await globex.as.admin.get<{ data: Dispatch[] }>('/api/dispatch/search');
    expect(search.body.data.every((d) => d.job_id !== job.id)).toBe(true);
    expect((await acme.as.driver.get('/api/dispatch/search')).status).toBe(403);
  });
});

describe('team dispatch and the decision explanation', () => {
  it('by ETA picks the nearest available on-schedule driver and explains who was left out and why', async () => {
    const team = await createTeam(acme, 'ETA team');
    const far = await createDriver(server, acme, { name: 'Far Fay', at: near(8), vehicleId: vehicle, teamIds: [team] });
    const nearest = await createDriver(server, acme, { name: 'Near Ned', at: near(1), vehicleId: vehicle, teamIds: [team] });
    const offSchedule = await createDriver(server, acme, { name: 'Off Ola', at: near(0.1), vehicleId: vehicle, teamIds: [team], weekly: [] });
    const onBreak = await createDriver(server, acme, { name: 'Break Bo', at: near(0.2), vehicleId: vehicle, teamIds: [team], availability: 'on_break' });
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const done = await acme.as.dispatcher.post<One<TeamOutcome>>('/api/dispatch/team/job', { job_id: job.id, team_id: team });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ selected_driver_id: nearest.id, selection_strategy: 'eta' });
    // The answer shows the job as a read of it does (built from one raw statement, not the ORM's entities).
    expect(done.body.data.job).toEqual((await acme.as.dispatcher.get<One>(`/api/job/${job.id}`)).body.data);
    const read = await acme.as.dispatcher.get<One<Dispatch>>(`/api/dispatch?id=${done.body.data.dispatch.id}`);
    const decision = read.body.data.decision!;
    expect(read.body.data.method).toBe('team');
    expect(decision.strategy).toBe('eta');
    expect(decision.candidates.map((c) => c.driver_id)).toEqual([nearest.id, far.id]);
    expect(decision.candidates[0]!.eta_minutes!).toBeLessThan(decision.candidates[1]!.eta_minutes!);
    expect(decision.exclusions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ driver_id: offSchedule.id, reason: 'off_schedule' }),
        expect.objectContaining({ driver_id: onBreak.id, reason: 'not_available' }),
      ]),
    );
    expect(decision.excluded_by_reason).toEqual({ off_schedule: 1, not_available: 1 });
    expect(decision.winner).toMatchObject({ driver_id: nearest.id });
  });

  it('by load picks the least loaded driver, and equal scores fall to the lower driver id', async () => {
    const team = await createTeam(acme, 'Load team');
    const busy = await createDriver(server, acme, { name: 'Busy Bea', at: near(0.5), vehicleId: vehicle, teamIds: [team] });
    const idle = await createDriver(server, acme, { name: 'Idle Ian', at: near(5), vehicleId: vehicle, teamIds: [team] });
    await acme.as.dispatcher.post('/api/dispatch/assign', { job_id: (await jobAt(acme.as.dispatcher, PARIS)).id, driver_id: busy.id });
    const byLoad = await acme.as.dispatcher.post<One<TeamOutcome>>('/api/dispatch/team/job', { job_id: (await jobAt(acme.as.dispatcher, PARIS)).id, team_id: team, selection_strategy: 'load' });
    expect(byLoad.body.data.selected_driver_id).toBe(idle.id);

    const tieTeam = await createTeam(acme, 'Tie team');
    const twins = [
      await createDriver(server, acme, { name: 'Twin A', at: near(2), vehicleId: vehicle, teamIds: [tieTeam] }),
      await createDriver(server, acme, { name: 'Twin B', at: near(2), vehicleId: vehicle, teamIds: [tieTeam] }),
    ];
    const lower = [...twins].sort((a, b) => (a.id < b.id ? -1 : 1))[0]!;
    const tie = await acme.as.dispatcher.post<One<TeamOutcome>>('/api/dispatch/team/job', { job_id: (await jobAt(acme.as.dispatcher, PARIS)).id, team_id: tieTeam });
    expect(tie.body.data.selected_driver_id).toBe(lower.id);
    expect(tie.body.data.dispatch.decision!.tie_rule).toContain('driver_id asc');
  });

  it('answers 422 NO_ELIGIBLE_DRIVER with the decision when nobody can take the job', async () => {
    const team = await createTeam(acme, 'Empty team');
    await createDriver(server, acme, { name: 'Offline Otto', at: near(1), vehicleId: vehicle, teamIds: [team], availability: 'offline' });
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const refused = await acme.as.dispatcher.post<Failure>('/api/dispatch/team/job', { job_id: job.id, team_id: team });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('NO_ELIGIBLE_DRIVER');
    expect(refused.body.details?.decision?.exclusions[0]?.reason).toBe('not_available');
    expect((await acme.as.dispatcher.post('/api/dispatch/team/job', { job_id: job.id, team_id: 'team_nope' })).status).toBe(404);
  });

  it("answers 404 naming team_id for a missing, inactive or another site's team, now or scheduled, and dispatches nothing", async () => {
    const inactive = await createTeam(acme, 'Disbanded team');
    await createDriver(server, acme, { name: 'Idle Ida', at: near(1), vehicleId: vehicle, teamIds: [inactive] });
    expect((await acme.as.admin.put('/api/team', { id: inactive, is_active: false })).status).toBe(200);
    const foreign = await createTeam(globex, 'Globex team');
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const later = new Date(server.clock.now().getTime() + 3600_000).toISOString();
    for (const team_id of ['team_nope', inactive, foreign]) {
      for (const extra of [{}, { start_at: later }]) {
        const refused = await acme.as.dispatcher.post<Failure>('/api/dispatch/team/job', { job_id: job.id, team_id, ...extra });
        expect(refused.status).toBe(404);
        expect(refused.body.code).toBe('NOT_FOUND');
        expect(refused.body.fields?.[0]?.field).toBe('team_id');
      }
    }
    expect((await acme.as.admin.get<One<{ phase: string; driver_user_id: string | null }>>(`/api/job/${job.id}`)).body.data).toMatchObject({ phase: 'unassigned', driver_user_id: null });
    expect((await acme.as.dispatcher.get<{ data: Dispatch[] }>(`/api/dispatch/search?job_id=${job.id}`)).body.data).toEqual([]);
  });
});

describe('GET /dispatch/available-drivers', () => {
  it('flags off_schedule and has_conflict, excludes them with exclude_unavailable, and takes a JSON body or query parameters', async () => {
    const team = await createTeam(acme, 'Avail team');
    const free = await createDriver(server, acme, { name: 'Free Fran', at: near(1), vehicleId: vehicle, teamIds: [team] });
    const off = await createDriver(server, acme, { name: 'Sched Sid', at: near(1), vehicleId: vehicle, weekly: [] });
    const clash = await createDriver(server, acme, { name: 'Clash Cat', at: near(1), vehicleId: vehicle });
    const start = new Date(server.clock.now().getTime() + 3 * 3600_000);
    const window = { after: start, before: new Date(start.getTime() + 3600_000) };
    const existing = await jobAt(acme.as.dispatcher, PARIS, { after: new Date(start.getTime() + 1800_000), before: new Date(start.getTime() + 7200_000) });
    expect((await acme.as.dispatcher.post('/api/dispatch/assign', { job_id: existing.id, driver_id: clash.id })).status).toBe(200);
    const job = await jobAt(acme.as.dispatcher, PARIS, window);

    const all = await acme.as.dispatcher.send<{ data: Entry[] }>('GET', '/api/dispatch/available-drivers', { job_id: job.id });
    expect(all.status).toBe(200);
    const byId = new Map(all.body.data.map((e) => [e.driver.id, e]));
    expect(byId.get(free.id)).toMatchObject({ available: true, unavailable_reason: null });
    expect(byId.get(free.id)!.eta_to_job!.duration_minutes).toBeGreaterThan(0);
    expect(byId.get(off.id)).toMatchObject({ available: false, unavailable_reason: 'off_schedule' });
    expect(byId.get(clash.id)).toMatchObject({ available: false, unavailable_reason: 'has_conflict' });

    const noConflicts = await acme.as.dispatcher.get<{ data: Entry[] }>(`/api/dispatch/available-drivers?job_id=${job.id}&consider_conflicts=false&consider_schedule=false`);
    const relaxed = new Map(noConflicts.body.data.map((e) => [e.driver.id, e]));
    expect(relaxed.get(clash.id)!.available).toBe(true);
    expect(relaxed.get(off.id)!.available).toBe(true);

    const only = await acme.as.dispatcher.send<{ data: Entry[] }>('GET', '/api/dispatch/available-drivers', { job_id: job.id, exclude_unavailable: true });
    const ids = only.body.data.map((e) => e.driver.id);
    expect(ids).toContain(free.id);
    expect(ids).not.toContain(off.id);
    expect(ids).not.toContain(clash.id);
    expect(only.body.data.every((e) => e.available)).toBe(true);

    const searched = await acme.as.dispatcher.get<{ data: Entry[] }>(`/api/dispatch/available-drivers?job_id=${job.id}&search_query=free%20fran`);
    expect(searched.body.data.map((e) => e.driver.id)).toEqual([free.id]);
    const missing = await acme.as.dispatcher.get<Failure>('/api/dispatch/available-drivers');
    expect(missing.status).toBe(400);
  });
});

describe('worker schedules as dispatch reads them', () => {
  it('a day off added to a driver without a schedule (read, add, write back) keeps them on every other day, until removed', async () => {
    const driver = await createDriver(server, acme, { name: 'Dayoff Dee', at: near(1), vehicleId: vehicle });
    const start = new Date(server.clock.now().getTime() + 3 * 3600_000);
    const onDayOff = await jobAt(acme.as.dispatcher, PARIS, { after: start, before: new Date(start.getTime() + 3600_000) });
    const twoDaysLater = new Date(start.getTime() + 48 * 3600_000);
    const onOtherDay = await jobAt(acme.as.dispatcher, PARIS, { after: twoDaysLater, before: new Date(twoDaysLater.getTime() + 3600_000) });
    const reasonFor = async (jobId: string) => {
      const list = await acme.as.dispatcher.get<{ data: Entry[] }>(`/api/dispatch/available-drivers?job_id=${jobId}`);
      return list.body.data.find((e) => e.driver.id === driver.id)!.unavailable_reason;
    };

    const read = await acme.as.dispatcher.get<One<{ weekly: unknown; exceptions: unknown[] }>>(`/api/worker/schedule?worker_id=${driver.id}`);
    expect(read.body.data).toMatchObject({ weekly: null, exceptions: [] });
    // The fixture site runs on UTC, so the window's UTC date is the site's date.
    const dayOff = { date: start.toISOString().slice(0, 10), off: true };
    const written = await acme.as.dispatcher.put('/api/worker/schedule', { worker_id: driver.id, weekly: read.body.data.weekly, exceptions: [...read.body.data.exceptions, dayOff] });
    expect(written.status).toBe(200);
    expect(await reasonFor(onDayOff.id)).toBe('off_schedule');
    expect(await reasonFor(onOtherDay.id)).toBeNull();

    expect((await acme.as.dispatcher.send('DELETE', `/api/worker/schedule?worker_id=${driver.id}`)).status).toBe(200);
    expect(await reasonFor(onDayOff.id)).toBeNull();
  });
});

describe('the opt-in pool', () => {
  it("shows team offers only to the team and site-wide ones to all; a claim dispatches to the claimer; a second claim is 409", async () => {
    const team = await createTeam(acme, 'Pool team');
    const member = await createDriver(server, acme, { name: 'Pool Pat', at: near(1), vehicleId: vehicle, teamIds: [team] });
    const outsider = await createDriver(server, acme, { name: 'Pool Out', at: near(1), vehicleId: vehicle });
    const teamJob = await jobAt(acme.as.dispatcher, PARIS);
    const openJob = await jobAt(acme.as.dispatcher, PARIS);
    const emptyTeamJob = await jobAt(acme.as.dispatcher, PARIS);
    const posted = await acme.as.dispatcher.post<One<{ succeeded: Dispatch[]; failed: { id: string; code: string }[] }>>('/api/dispatch/pool', { job_ids: [teamJob.id], team_id: team });
    const postedOpen = await acme.as.dispatcher.post<One<{ succeeded: Dispatch[]; failed: { id: string; code: string }[] }>>('/api/dispatch/pool', { job_ids: [openJob.id, openJob.id, 'job_missing'] });
    // The spec: an empty team_id means the job floats site-wide.
    const postedEmptyTeam = await acme.as.dispatcher.post<One<{ succeeded: Dispatch[] }>>('/api/dispatch/pool', { job_ids: [emptyTeamJob.id], team_id: '' });
    expect(posted.body.data.succeeded).toHaveLength(1);
    expect(postedOpen.body.data.succeeded).toHaveLength(1);
    expect(postedEmptyTeam.body.data.succeeded.map((d) => d.team_id)).toEqual([null]);
    expect(postedOpen.body.data.failed).toEqual([expect.objectContaining({ id: 'job_missing', code: 'NOT_FOUND' })]);
    const again = await acme.as.dispatcher.post<One<{ failed: { code: string }[] }>>('/api/dispatch/pool', { job_ids: [openJob.id] });
    expect(again.body.data.failed[0]!.code).toBe('ALREADY_DISPATCHED');

    type Pool = { data: { dispatch_id: string; job: { id: string }; team_id: string | null }[] };
    const seenByMember = (await member.client.get<Pool>('/api/dispatch/pool')).body.data.map((p) => p.job.id);
    const seenByOutsider = (await outsider.client.get<Pool>('/api/dispatch/pool')).body.data.map((p) => p.job.id);
    expect(seenByMember).toEqual(expect.arrayContaining([teamJob.id, openJob.id]));
    expect(seenByOutsider).toEqual(expect.arrayContaining([openJob.id, emptyTeamJob.id]));
    expect(seenByOutsider).not.toContain(teamJob.id);

    const teamOffer = posted.body.data.succeeded[0]!.id;
    expect((await outsider.client.post('/api/dispatch/claim', { dispatch_id: teamOffer })).status).toBe(404);
    const claimed = await member.client.post<One<Outcome>>('/api/dispatch/claim', { dispatch_id: teamOffer });
    expect(claimed.status).toBe(200);
    expect(claimed.body.data.dispatch).toMatchObject({ status: 'processing', method: 'opt-in', assigned_to_driver_id: member.id, driver_accepted: true });
    expect(claimed.body.data.job).toMatchObject({ phase: 'assigned', driver_user_id: member.id });
    // A driver's view of the job (no internal notes), as the driver's own read shows it.
    expect(claimed.body.data.job).toEqual((await member.client.get<One>(`/api/job/${teamJob.id}`)).body.data);
    const second = await member.client.post<Failure>('/api/dispatch/claim', { dispatch_id: teamOffer });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('ALREADY_CLAIMED');
    expect((await member.client.get<Pool>('/api/dispatch/pool')).body.data.map((p) => p.job.id)).not.toContain(teamJob.id);
  });
});

describe('site strategies and settings', () => {
  it('reads and changes the settings (audited); drivers cannot', async () => {
    expect((await acme.as.dispatcher.get<One<{ strategy: string; auto_dispatch: boolean }>>('/api/dispatch/settings')).body.data).toMatchObject({ strategy: 'load-balanced', auto_dispatch: false });
    const changed = await acme.as.admin.put<One<{ strategy: string }>>('/api/dispatch/settings', { strategy: 'zone-based' });
    expect(changed.body.data.strategy).toBe('zone-based');
    expect((await acme.as.admin.put<Failure>('/api/dispatch/settings', { strategy: 'fastest' })).status).toBe(400);
    expect((await acme.as.driver.put('/api/dispatch/settings', { strategy: 'priority' })).status).toBe(403);
    await acme.as.admin.put('/api/dispatch/settings', { strategy: 'load-balanced' });
  });

  it('a strategy method without driver_id lets the strategy choose; zone-based keeps to drivers of the pickup zone', async () => {
    const zone = await acme.as.admin.post<One<{ id: string }>>('/api/zone', {
      name: 'North service', kind: 'service', geometry: { type: 'Polygon', coordinates: [[[3.0, 49.0], [3.2, 49.0], [3.2, 49.2], [3.0, 49.2], [3.0, 49.0]]] },
    });
    const inZone = await createDriver(server, acme, { name: 'Zone Zoe', at: { lat: 48.0, lng: 3.0 }, vehicleId: vehicle, zoneIds: [zone.body.data.id] });
    const job = await jobAt(acme.as.dispatcher, { lat: 49.1, lng: 3.1 });
    const done = await acme.as.dispatcher.post<One<Outcome>>('/api/dispatch/assign', { job_id: job.id, method: 'zone-based' });
    expect(done.status).toBe(200);
    expect(done.body.data.dispatch).toMatchObject({ method: 'zone-based', assigned_to_driver_id: inZone.id });
    expect(done.body.data.dispatch.decision!.exclusions.some((e) => e.reason === 'outside_zone')).toBe(true);
    expect((await acme.as.dispatcher.post<Failure>('/api/dispatch/assign', { job_id: job.id, method: 'manual' })).body.code).toBe('DRIVER_REQUIRED');
  });
});

describe('many jobs at once', () => {
  // optimize_routes (the route optimizer, which plans by travel time rather than by load) is tested in dispatch-optimize.test.ts.
  it('bulk-distribute spreads jobs over the team by load and reports per-job failures', async () => {
    const team = await createTeam(acme, 'Bulk team');
    const a = await createDriver(server, acme, { name: 'Bulk Ada', at: near(1), vehicleId: vehicle, teamIds: [team] });
    const b = await createDriver(server, acme, { name: 'Bulk Ben', at: near(2), vehicleId: vehicle, teamIds: [team] });
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push(await jobAt(acme.as.dispatcher, near(i)));
    const taken = await jobAt(acme.as.dispatcher, PARIS);
    await acme.as.dispatcher.post('/api/dispatch/assign', { job_id: taken.id, driver_id: a.id });
    type Bulk = {
      routes: { route_id: string; driver_id: string; optimized: boolean; dispatched_job_ids: string[] }[]; failed_jobs: { job_id: string; code: string }[];
      succeeded: string[]; failed: { id: string; code: string }[];
    };
    const done = await acme.as.dispatcher.post<One<Bulk>>('/api/dispatch/bulk-distribute', { job_ids: [...jobs.map((j) => j.id), taken.id, 'job_missing'], team_id: team });
    expect(done.status).toBe(200);
    const counts = Object.fromEntries(done.body.data.routes.map((r) => [r.driver_id, r.dispatched_job_ids.length]));
    // Ada already had one job: the balance by load gives Ben the extra one.
    expect(counts).toEqual({ [a.id]: 1, [b.id]: 3 });
    expect(done.body.data.routes.every((r) => !r.optimized)).toBe(true);
    expect(done.body.data.failed_jobs.map((f) => [f.job_id, f.code]).sort()).toEqual([[taken.id, 'JOB_NOT_UNASSIGNED'], ['job_missing', 'NOT_FOUND']].sort());
    // The spec's bulk shape too: succeeded and failed parts.
    expect(done.body.data.succeeded.toSorted()).toEqual(jobs.map((j) => j.id).toSorted());
    expect(done.body.data.failed.map((f) => [f.id, f.code]).sort()).toEqual([[taken.id, 'JOB_NOT_UNASSIGNED'], ['job_missing', 'NOT_FOUND']].sort());
  });

  it('dispatch/route gives every unassigned job of a route to the driver; team/route picks the driver by strategy', async () => {
    const driver = await createDriver(server, acme, { name: 'Route Rae', at: near(1), vehicleId: vehicle });
    const jobs = [await jobAt(acme.as.dispatcher, PARIS), await jobAt(acme.as.dispatcher, near(1))];
    const route = await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Morning', service_date: '2030-01-03', job_ids: jobs.map((j) => j.id) });
    expect(route.status).toBe(201);
    type RouteResult = { route: { id: string; driver_user_id: string; phase: string }; dispatched_job_ids: string[]; failed_jobs: unknown[]; selected_driver_id: string; succeeded: string[]; failed: unknown[] };
    const done = await acme.as.dispatcher.post<One<RouteResult>>('/api/dispatch/route', { route_id: route.body.data.id, driver_id: driver.id });
    expect(done.status).toBe(200);
    expect(done.body.data.dispatched_job_ids.sort()).toEqual(jobs.map((j) => j.id).sort());
    expect([done.body.data.succeeded.toSorted(), done.body.data.failed]).toEqual([jobs.map((j) => j.id).toSorted(), []]);
    expect(done.body.data.route).toMatchObject({ driver_user_id: driver.id, phase: 'assigned' });

    const team = await createTeam(acme, 'Route team');
    const member = await createDriver(server, acme, { name: 'Team Tom', at: near(1), vehicleId: vehicle, teamIds: [team] });
    const other = await jobAt(acme.as.dispatcher, PARIS);
    const second = await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Evening', service_date: '2030-01-03', job_ids: [other.id] });
    const byTeam = await acme.as.dispatcher.post<One<RouteResult & { selection_strategy: string }>>('/api/dispatch/team/route', { route_id: second.body.data.id, team_id: team });
    expect(byTeam.status).toBe(200);
    expect(byTeam.body.data).toMatchObject({ selected_driver_id: member.id, selection_strategy: 'eta', dispatched_job_ids: [other.id] });
  });

  it("keeps a route and its jobs with one driver: no route passes over another driver's jobs, no job joins another driver's route", async () => {
    const [ann, bob] = [await createDriver(server, acme, { name: 'Route Ann', at: near(1), vehicleId: vehicle }), await createDriver(server, acme, { name: 'Route Bob', at: near(1), vehicleId: vehicle })];
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const route = (await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Ann day', service_date: '2030-01-04', job_ids: [job.id] })).body.data.id;
    expect((await acme.as.dispatcher.post('/api/dispatch/route', { route_id: route, driver_id: ann.id })).status).toBe(200);
    const passed = await acme.as.dispatcher.post<Failure>('/api/dispatch/route', { route_id: route, driver_id: bob.id });
    expect([passed.status, passed.body.code, passed.body.fields?.[0]?.field]).toEqual([409, 'DRIVER_MISMATCH', 'driver_id']);
    const joined = await acme.as.dispatcher.post<Failure>('/api/dispatch/assign', { job_id: (await jobAt(acme.as.dispatcher, PARIS)).id, driver_id: bob.id, route_id: route });
    expect([joined.status, joined.body.code, joined.body.fields?.[0]?.field]).toEqual([409, 'DRIVER_MISMATCH', 'route_id']);
    const read = (await acme.as.dispatcher.get<One<{ driver_user_id: string; phase: string }>>(`/api/route?id=${route}`)).body.data;
    expect(read.driver_user_id).toBe(ann.id);
    // A bogus vehicle is refused before the route takes anything; a route none of whose jobs went stays planned.
    const planned = (await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Empty', service_date: '2030-01-04' })).body.data.id;
    const bogus = await acme.as.dispatcher.post<Failure>('/api/dispatch/route', { route_id: planned, driver_id: bob.id, vehicle_id: 'veh_bogus' });
    expect([bogus.status, bogus.body.fields?.[0]?.field]).toEqual([404, 'vehicle_id']);
    const empty = await acme.as.dispatcher.post<One<{ route: { phase: string; driver_user_id: string | null } }>>('/api/dispatch/route', { route_id: planned, driver_id: bob.id });
    expect(empty.body.data.route).toMatchObject({ phase: 'unassigned' });
    // A job merely meant for Ann (still unassigned), on a route planned for her, goes with the route to Bob.
    const meant = await createJob(acme.as.dispatcher, { driver_user_id: ann.id });
    const bobs = (await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Ann or Bob', service_date: '2030-01-04', driver_user_id: ann.id, job_ids: [meant.id] })).body.data.id;
    const handed = await acme.as.dispatcher.post<One<{ dispatched_job_ids: string[] }>>('/api/dispatch/route', { route_id: bobs, driver_id: bob.id });
    expect([handed.status, handed.body.data.dispatched_job_ids]).toEqual([200, [meant.id]]);
    // A planned route whose jobs are already the driver's is dispatched, with nothing new to dispatch.
    const held = await jobAt(acme.as.dispatcher, PARIS);
    expect((await acme.as.dispatcher.post('/api/dispatch/assign', { job_id: held.id, driver_id: bob.id })).status).toBe(200);
    const laterRoute = await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name: 'Bob later', service_date: '2030-01-05', driver_user_id: bob.id, job_ids: [held.id] });
    expect(laterRoute.status, laterRoute.text).toBe(201);
    const later = laterRoute.body.data.id;
    const owned = await acme.as.dispatcher.post<One<{ dispatched_job_ids: string[]; route: { phase: string } }>>('/api/dispatch/route', { route_id: later, driver_id: bob.id });
    expect([owned.status, owned.body.data.dispatched_job_ids, owned.body.data.route.phase]).toEqual([200, [], 'assigned']);
  });
});

describe('auto dispatch', () => {
  it('dispatches a new job behind fifty older ones nobody may take (outside every service zone): those wait, it does not', async () => {
    const site = await createSiteFixture(server, 'autoblocked');
    const ARC = { lat: 48.8738, lng: 2.295 };
    const area = { type: 'Polygon', coordinates: [[[2.28, 48.865], [2.31, 48.865], [2.31, 48.885], [2.28, 48.885], [2.28, 48.865]]] };
    const zone = await site.as.admin.post<One<{ id: string }>>('/api/zone', { name: 'Étoile', kind: 'service', geometry: area });
    expect(zone.status).toBe(201);
    // Fifty-one jobs in the centre, which no driver's zone covers: zone-based dispatch finds nobody for them.
    for (let i = 0; i < 51; i++) await createJob(site.as.dispatcher, { stops: [stop('pickup', PARIS), stop('dropoff', near(1))] });
    const van = await createVehicle(site);
    await createDriver(server, site, { name: 'Free Fred', at: ARC, vehicleId: van, zoneIds: [zone.body.data.id] });
    const open = await createJob(site.as.dispatcher, { stops: [stop('pickup', ARC), stop('dropoff', { lat: 48.878, lng: 2.29 })] });
    expect((await site.as.admin.put('/api/dispatch/settings', { auto_dispatch: true, strategy: 'zone-based' })).status).toBe(200);
    await waitFor('the open job dispatched', async () => {
      const found = await site.as.dispatcher.get<{ data: Dispatch[] }>(`/api/dispatch/search?job_id=${open.id}`);
      return found.body.data.find((d) => d.status === 'processing');
    }, 15_000);
    await site.as.admin.put('/api/dispatch/settings', { auto_dispatch: false });
  }, 60_000);

  it("dispatches new jobs with the site's strategy while auto is on, and completes the dispatch when the job ends", async () => {
    const site = await createSiteFixture(server, 'autosite');
    const van = await createVehicle(site);
    const driver = await createDriver(server, site, { name: 'Auto Al', at: near(1), vehicleId: van });
    expect((await site.as.admin.put('/api/dispatch/settings', { auto_dispatch: true, strategy: 'round-robin' })).status).toBe(200);
    const job = await jobAt(site.as.dispatcher, PARIS);
    const dispatched = await waitFor('auto dispatch', async () => {
      const found = await site.as.dispatcher.get<{ data: Dispatch[] }>(`/api/dispatch/search?job_id=${job.id}`);
      return found.body.data.find((d) => d.status === 'processing');
    }, 10_000);
    expect(dispatched).toMatchObject({ method: 'auto', assigned_to_driver_id: driver.id });
    expect(dispatched.decision!.strategy).toBe('round-robin');
    await site.as.admin.put('/api/dispatch/settings', { auto_dispatch: false });
    const states = await stateIds(site.as.admin, 'job');
    await site.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: states.cancelled });
    await waitFor('dispatch completed', async () => (await site.as.dispatcher.get<One<Dispatch>>(`/api/dispatch?id=${dispatched.id}`)).body.data.status === 'completed', 10_000);
  });
});
