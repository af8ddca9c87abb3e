import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addJobToRoute, openRouteFor, removeJobFromRoute, routeJobIds } from '../../engine/routes/route-membership.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, sessionClient, type SiteFixture } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createJob, stateIds, type JobBody } from '../support/job-fixtures.ts';
import { recording, transactionWith } from '../support/pg-recording.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

type One<T = Record<string, unknown>> = { data: T };
type Many<T = Record<string, unknown>> = { data: T[]; meta: { pagination: { totalItems: number } } };
type Failure = { code: string; error: string; fields?: { field: string }[]; details?: Record<string, unknown> };
type RouteStop = { id: string; job_id: string; type: string; order: number; phase: string; address: { formatted_name: string } };
type Route = {
  id: string;
  site_id: string;
  name: string;
  driver_user_id: string | null;
  vehicle_id: string | null;
  team_id: string | null;
  service_date: string;
  workflow_state_id: string;
  state: { key: string };
  phase: string;
  job_ids: string[];
  stops: RouteStop[];
  planned_distance_meters: number;
  planned_duration_seconds: number;
  started_at: string | null;
  completed_at: string | null;
  version: number;
};
type Job = JobBody & { route_id: string | null; driver_user_id: string | null };

const DAY = '2026-11-21';

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
let driver: ApiClient;
let jobStates: Record<string, string>;
let stopStates: Record<string, string>;


async function plan(body: Record<string, unknown>, client = acme.as.dispatcher): Promise<Route> {
  const response = await client.post<One<Route>>('/api/route', { service_date: DAY, ...body });
  if (response.status !== 201) throw new Error(`route create failed: ${response.status} ${response.text}`);
  return response.body.data;
}

const getRoute = async (id: string, client = acme.as.dispatcher) => (await client.get<One<Route>>(`/api/route?id=${id}`)).body.data;
const getJob = async (id: string) => (await acme.as.dispatcher.get<One<Job>>(`/api/job/${id}`)).body.data;

const asDispatcher = () => ({ siteId: acme.site.id, actor: { userId: acme.users.dispatcher.id, applicationId: null, requestId: 'test', role: 'dispatcher' as const } });

/** Stands in for dispatch (another module): moves the route through the engine as a dispatcher would. */
async function dispatchRoute(routeId: string): Promise<void> {
  await server.services.engine.transition(asDispatcher(), 'route', routeId, { kind: 'phase', event: 'dispatch' });
}

/** A job of the fixture's driver, dispatched. */
async function driversJob(): Promise<Job> {
  const job = await createJob(acme.as.dispatcher, { driver_user_id: acme.users.driver.id });
  await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched });
  return job as Job;
}

async function routeEvents(routeId: string): Promise<{ event: string; phase: string }[]> {
  const rows = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
    em.execute<{ payload: { event: string; data: { phase: string } } }[]>('select payload from outbox where entity_id = ? order by seq', [routeId]),
  );
  return rows.map((r) => ({ event: r.payload.event, phase: r.payload.data.phase }));
}

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
  jobStates = await stateIds(acme.as.admin, 'job');
  stopStates = await stateIds(acme.as.admin, 'stop');
  driver = await sessionClient(server, 'acme', acme.users.driver);
});
afterAll(() => server.close());

describe('routes', () => {
  it('plans a route with jobs in order, reads, searches and edits it three-state, auditing each change', async () => {
    const vehicle = (await acme.as.admin.post<One<{ id: string }>>('/api/vehicle', { name: 'Van', type: 'van' })).body.data;
    const team = (await acme.as.admin.post<One<{ id: string }>>('/api/team', { name: 'North' })).body.data;
    const [first, second] = [await createJob(acme.as.dispatcher), await createJob(acme.as.dispatcher)];
    const route = await plan({ name: 'Left bank', driver_user_id: acme.users.driver.id, vehicle_id: vehicle.id, team_id: team.id, job_ids: [second.id, first.id] });
    expect(route).toMatchObject({ id: expect.stringMatching(/^rte_/), site_id: acme.site.id, name: 'Left bank', service_date: DAY, phase: 'unassigned', version: 1 });
    expect(route.state.key).toBe('planned');
    expect(route.job_ids).toEqual([second.id, first.id]);
    expect(route.stops.map((s) => [s.job_id, s.type, s.order])).toEqual([
      [second.id, 'pickup', 1], [second.id, 'dropoff', 2], [first.id, 'pickup', 3], [first.id, 'dropoff', 4],
    ]);
    expect(route.stops[0]!.address.formatted_name).toContain('Rivoli');
    expect(route.planned_distance_meters).toBeGreaterThan(5000);
    expect(route.planned_duration_seconds).toBeGreaterThan(0);
    expect((await getJob(first.id)).route_id).toBe(route.id);
    expect(await getRoute(route.id)).toEqual(route);

    await plan({ name: 'Other day', service_date: '2026-11-25' });
    const byDriver = await acme.as.admin.get<Many<Route>>(`/api/route/search?driver_user_id=${acme.users.driver.id}&service_date_from=${DAY}&service_date_to=${DAY}`);
    expect(byDriver.body.data.map((r) => r.id)).toEqual([route.id]);
    const byState = await acme.as.admin.get<Many<Route>>(`/api/route/search?workflow_state_ids=${route.workflow_state_id}&phase=unassigned&team_id=${team.id}&vehicle_id=${vehicle.id}`);
    expect(byState.body.data.map((r) => r.id)).toEqual([route.id]);
    const later = await acme.as.admin.get<Many<Route>>('/api/route/search?service_date_from=2026-11-22&sort=name');
    expect(later.body.data.map((r) => r.name)).toEqual(['Other day']);

    const renamed = await acme.as.dispatcher.put<One<Route>>('/api/route', { id: route.id, version: 1, name: 'Rive gauche', team_id: null });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Rive gauche', team_id: null, vehicle_id: vehicle.id, driver_user_id: acme.users.driver.id, version: 2 });
    const stale = await acme.as.dispatcher.put<Failure>('/api/route', { id: route.id, version: 1, name: 'Late' });
    expect([stale.status, stale.body.code]).toEqual([409, 'VERSION_CONFLICT']);

    const audit = await acme.as.admin.get<Many<{ action: string; new_data: { job_ids?: string[] } }>>(`/api/audit/search?entity_type=Route&entity_id=${route.id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update']);
    expect(audit.body.data.find((r) => r.action === 'create')!.new_data.job_ids).toEqual([second.id, first.id]);
    expect((await routeEvents(route.id)).map((e) => e.event)).toEqual(['route:create', 'route:update']);
  });

  it('reads a route and searches routes in one round trip each, as the edits answer them; a page past the last match still counts them', async () => {
    const routes = [await plan({ name: 'Paged A', service_date: '2026-12-01' }), await plan({ name: 'Paged B', service_date: '2026-12-01', job_ids: [(await createJob(acme.as.dispatcher)).id] })];
    const edited = await acme.as.dispatcher.put<One<Route>>('/api/route', { id: routes[1]!.id, version: 1, name: 'Paged C' });
    const search = async (page: number) => (await acme.as.admin.get<Many<Route>>(`/api/route/search?service_date_from=2026-12-01&service_date_to=2026-12-01&sort=name&page_size=1&page=${page}`)).body;
    const [first, second, past] = [await search(1), await search(2), await search(3)];
    expect([...first.data, ...second.data]).toEqual([routes[0], edited.body.data]);
    expect([first.meta.pagination.totalItems, second.meta.pagination.totalItems, past.meta.pagination.totalItems, past.data.length]).toEqual([2, 2, 2, 0]);
    const sent = await recording(async () => {
      expect(await getRoute(routes[1]!.id)).toEqual(edited.body.data);
    });
    expect(transactionWith(sent, routes[1]!.id)).toHaveLength(1);
  });

  it('reorders stops, refusing a dropoff before its pickup (naming the stop) and anything but the full order', async () => {
    const [a, b] = [await createJob(acme.as.dispatcher), await createJob(acme.as.dispatcher)];
    const route = await plan({ job_ids: [a.id, b.id] });
    const [aPickup, aDropoff, bPickup, bDropoff] = route.stops.map((s) => s.id);
    const interleaved = await acme.as.dispatcher.put<One<Route>>('/api/route', { id: route.id, stop_ids: [bPickup, aPickup, bDropoff, aDropoff] });
    expect(interleaved.status).toBe(200);
    expect(interleaved.body.data.stops.map((s) => [s.id, s.order])).toEqual([[bPickup, 1], [aPickup, 2], [bDropoff, 3], [aDropoff, 4]]);
    expect(interleaved.body.data.job_ids).toEqual([b.id, a.id]);

    const backwards = await acme.as.dispatcher.put<Failure>('/api/route', { id: route.id, stop_ids: [aDropoff, aPickup, bPickup, bDropoff] });
    expect(backwards.status).toBe(400);
    expect(backwards.body).toMatchObject({ code: 'PICKUP_AFTER_DROPOFF', details: { stop_id: aDropoff, pickup_stop_id: aPickup } });
    expect(backwards.body.error).toContain(aDropoff);
    expect(backwards.body.fields?.[0]?.field).toBe('stop_ids.0');
    for (const stopIds of [[bPickup, aPickup, bDropoff], [bPickup, aPickup, bDropoff, aDropoff, aDropoff], [bPickup, aPickup, bDropoff, 'stp_unknown']]) {
      const refused = await acme.as.dispatcher.put<Failure>('/api/route', { id: route.id, stop_ids: stopIds });
      expect([refused.status, refused.body.code], JSON.stringify(stopIds)).toEqual([400, 'INVALID_STOP_ORDER']);
    }
    const unchanged = await getRoute(route.id);
    expect(unchanged.stops.map((s) => s.id)).toEqual([bPickup, aPickup, bDropoff, aDropoff]);
    expect(unchanged.version).toBe(2);
  });

  it('binds only open stops to pickup-before-dropoff: a cancelled dropoff may stay before its pickup', async () => {
    const stops = [
      { type: 'pickup', street_address: '1 Rue A', city: 'Paris', point: { lat: 48.85, lng: 2.35 } },
      { type: 'dropoff', street_address: '2 Rue B', city: 'Paris', point: { lat: 48.86, lng: 2.35 } },
      { type: 'dropoff', street_address: '3 Rue C', city: 'Paris', point: { lat: 48.87, lng: 2.35 } },
    ];
    const job = await createJob(acme.as.dispatcher, { stops });
    const route = await plan({ job_ids: [job.id] });
    const [pickup, first, second] = route.stops.map((s) => s.id);
    expect((await acme.as.dispatcher.post('/api/stop/state', { stop_id: first, workflow_state_id: stopStates.cancelled })).status).toBe(200);
    const moved = await acme.as.dispatcher.put<One<Route>>('/api/route', { id: route.id, stop_ids: [first, pickup, second] });
    expect([moved.status, moved.body.data.stops.map((s) => s.id)]).toEqual([200, [first, pickup, second]]);
    const open = await acme.as.dispatcher.put<Failure>('/api/route', { id: route.id, stop_ids: [first, second, pickup] });
    expect([open.status, open.body.code]).toEqual([400, 'PICKUP_AFTER_DROPOFF']);
  });

  it('moves jobs between routes with checks: open jobs only, on the route to leave it, no driver mismatch', async () => {
    const [a, b] = [await createJob(acme.as.dispatcher), await createJob(acme.as.dispatcher)];
    const from = await plan({ name: 'From', job_ids: [a.id, b.id] });
    const to = await plan({ name: 'To' });
    const moved = await acme.as.dispatcher.put<One<Route>>('/api/route', { id: to.id, add_job_ids: [a.id] });
    expect(moved.body.data.job_ids).toEqual([a.id]);
    expect(moved.body.data.stops.map((s) => s.order)).toEqual([1, 2]);
    expect((await getRoute(from.id)).job_ids).toEqual([b.id]);
    expect((await getJob(a.id)).route_id).toBe(to.id);
    const fromAudit = await acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=Route&entity_id=${from.id}`);
    expect(fromAudit.body.data.map((r) => r.action).sort()).toEqual(['create', 'remove_job']);

    const out = await acme.as.dispatcher.put<One<Route>>('/api/route', { id: from.id, remove_job_ids: [b.id] });
    expect(out.body.data).toMatchObject({ job_ids: [], stops: [], planned_distance_meters: 0 });
    expect((await getJob(b.id)).route_id).toBeNull();

    const notOn = await acme.as.dispatcher.put<Failure>('/api/route', { id: from.id, remove_job_ids: [a.id] });
    expect([notOn.status, notOn.body.code, notOn.body.fields?.[0]?.field]).toEqual([409, 'JOB_NOT_ON_ROUTE', 'remove_job_ids.0']);
    await acme.as.dispatcher.post('/api/job/state', { job_id: b.id, workflow_state_id: jobStates.cancelled, cancellation_notes: 'gone' });
    const closed = await acme.as.dispatcher.put<Failure>('/api/route', { id: from.id, add_job_ids: [b.id] });
    expect([closed.status, closed.body.code, closed.body.fields?.[0]?.field]).toEqual([409, 'JOB_CLOSED', 'add_job_ids.0']);
    const assigned = await driversJob();
    const mismatch = await acme.as.dispatcher.put<Failure>('/api/route', { id: from.id, add_job_ids: [assigned.id] });
    expect([mismatch.status, mismatch.body.code]).toEqual([409, 'DRIVER_MISMATCH']);
    expect((await getRoute(from.id)).job_ids).toEqual([]);
  });

  it("lets only the route's driver start and complete it; the last job ending completes the route by itself", async () => {
    const job = await driversJob();
    const route = await plan({ driver_user_id: acme.users.driver.id, job_ids: [job.id] });
    const early = await driver.post<Failure>('/api/driver/route/start', { route_id: route.id });
    expect([early.status, early.body.code]).toEqual([409, 'INVALID_TRANSITION']);
    await dispatchRoute(route.id);
    expect((await getRoute(route.id)).state.key).toBe('dispatched');

    const created = await acme.as.admin.post<One<{ id: string }>>('/api/user', { email: 'route.driver2@acme.example', password: 'second-driver-pw', role: 'driver' });
    const stranger = await sessionClient(server, 'acme', { email: 'route.driver2@acme.example', password: 'second-driver-pw' });
    expect(created.status).toBe(201);
    expect((await stranger.post<Failure>('/api/driver/route/start', { route_id: route.id })).status).toBe(404);
    expect((await stranger.get<Failure>(`/api/route?id=${route.id}`)).status).toBe(404);
    expect((await stranger.get<Many<Route>>('/api/route/search')).body.data).toEqual([]);
    const mine = (await driver.get<Many<Route>>('/api/route/search?per_page=100')).body.data;
    expect(mine.map((r) => r.id)).toContain(route.id);
    expect(mine.every((r) => r.driver_user_id === acme.users.driver.id)).toBe(true);

    const started = await driver.post<One<Route>>('/api/driver/route/start', { route_id: route.id });
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({ phase: 'in_progress', started_at: expect.any(String), completed_at: null });
    const open = await driver.post<Failure>('/api/driver/route/complete', { route_id: route.id });
    expect([open.status, open.body.code, open.body.details?.open_job_ids]).toEqual([409, 'ROUTE_HAS_OPEN_JOBS', [job.id]]);

    for (const stop of job.stops) {
      for (const key of ['en_route', 'arrived', 'completed']) {
        const moved = await driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[key] });
        expect(moved.status, `${stop.id} → ${key}: ${moved.text}`).toBe(200);
      }
    }
    expect((await getJob(job.id)).phase).toBe('completed');
    const done = await getRoute(route.id);
    expect(done).toMatchObject({ phase: 'completed', completed_at: expect.any(String) });
    expect(done.state.key).toBe('completed');
    expect((await routeEvents(route.id)).filter((e) => e.event === 'route:state_change').map((e) => e.phase)).toEqual(['assigned', 'in_progress', 'completed']);
    const audit = await acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=Route&entity_id=${route.id}&action=state_change`);
    expect(audit.body.data).toHaveLength(3);
    const again = await driver.post<Failure>('/api/driver/route/complete', { route_id: route.id });
    expect([again.status, again.body.code]).toEqual([409, 'INVALID_TRANSITION']);
    const edit = await acme.as.dispatcher.put<Failure>('/api/route', { id: route.id, name: 'Too late' });
    expect([edit.status, edit.body.code]).toEqual([409, 'ROUTE_CLOSED']);
  });

  it('a returned job leaves its route, and a driver completes a route left without open jobs', async () => {
    const job = await driversJob();
    const route = await plan({ driver_user_id: acme.users.driver.id, job_ids: [job.id] });
    await dispatchRoute(route.id);
    await driver.post('/api/driver/route/start', { route_id: route.id });
    const returned = await driver.post('/api/driver/job/return', { job_id: job.id });
    expect(returned.status).toBe(200);
    expect((await getJob(job.id)).route_id).toBeNull();
    const left = await getRoute(route.id);
    expect(left).toMatchObject({ job_ids: [], stops: [], phase: 'in_progress' });
    const completed = await driver.post<One<Route>>('/api/driver/route/complete', { route_id: route.id });
    expect(completed.status).toBe(200);
    expect(completed.body.data).toMatchObject({ phase: 'completed', completed_at: expect.any(String) });
  });

  it('POST /route/state cancels a route (staff only), releasing its open jobs: dispatched ones return to unassigned, all leave it', async () => {
    const waiting = await createJob(acme.as.dispatcher);
    const dispatched = await driversJob();
    const route = await plan({ driver_user_id: acme.users.driver.id, job_ids: [waiting.id, dispatched.id] });
    const routeStates = await stateIds(acme.as.admin, 'route');
    const move = { route_id: route.id, workflow_state_id: routeStates.cancelled, cancellation_notes: 'van broke down' };
    expect((await driver.post('/api/route/state', move)).status).toBe(403);
    expect((await globex.as.dispatcher.post('/api/route/state', move)).status).toBe(404);
    const cancelled = await acme.as.dispatcher.post<One<Route & { cancellation_notes: string }>>('/api/route/state', move);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ phase: 'cancelled', job_ids: [], stops: [], cancellation_notes: 'van broke down' });
    expect(await getRoute(route.id)).toEqual(cancelled.body.data);
    const again = await acme.as.dispatcher.post<Failure>('/api/route/state', move);
    expect([again.status, again.body.code]).toEqual([409, 'INVALID_TRANSITION']);
    expect(await getJob(waiting.id)).toMatchObject({ phase: 'unassigned', route_id: null });
    expect(await getJob(dispatched.id)).toMatchObject({ phase: 'unassigned', route_id: null, driver_user_id: null });
  });

  it('POST /route/state keeps a route and its jobs agreeing: no completing with open jobs, no planning with dispatched ones, no dispatch here', async () => {
    const routeStates = await stateIds(acme.as.admin, 'route');
    const job = await driversJob();
    const route = await plan({ driver_user_id: acme.users.driver.id, job_ids: [job.id] });
    const planned = await acme.as.dispatcher.post<Failure>('/api/route/state', { route_id: route.id, workflow_state_id: routeStates.dispatched });
    expect([planned.status, planned.body.code]).toEqual([409, 'DISPATCH_THE_ROUTE']);
    await dispatchRoute(route.id);
    const back = await acme.as.dispatcher.post<Failure>('/api/route/state', { route_id: route.id, workflow_state_id: routeStates.planned });
    expect([back.status, back.body.code]).toEqual([409, 'ROUTE_HAS_DISPATCHED_JOBS']);
    await server.services.engine.transition(asDispatcher(), 'route', route.id, { kind: 'phase', event: 'start' });
    const done = await acme.as.dispatcher.post<Failure>('/api/route/state', { route_id: route.id, workflow_state_id: routeStates.completed });
    expect([done.status, done.body.code]).toEqual([409, 'ROUTE_HAS_OPEN_JOBS']);
    expect(await getRoute(route.id)).toMatchObject({ phase: 'in_progress', job_ids: [job.id] });
  });

  it("gives dispatch one open route per driver and day, and moves jobs on and off it idempotently", async () => {
    const job = await createJob(acme.as.dispatcher);
    const day = '2026-12-01';
    const input = { driverUserId: acme.users.driver.id, vehicleId: null, serviceDate: day };
    const open = () => server.services.engine.command(asDispatcher(), `test:${Math.random()}`, (scope) => openRouteFor(scope, input));
    const [one, two] = await Promise.all([open(), open()]);
    expect(one.id).toBe(two.id);
    expect(one).toMatchObject({ driverUserId: acme.users.driver.id, serviceDate: day, phase: 'unassigned', siteId: acme.site.id });
    const ids = await server.services.engine.command(asDispatcher(), `route:${one.id}`, async (scope) => {
      await addJobToRoute(scope, one.id, job.id);
      await addJobToRoute(scope, one.id, job.id);
      return routeJobIds(scope, one.id);
    });
    expect(ids).toEqual([job.id]);
    expect((await getRoute(one.id)).stops).toHaveLength(2);
    await server.services.engine.command(asDispatcher(), `route:${one.id}`, (scope) => removeJobFromRoute(scope, job.id));
    expect((await getRoute(one.id)).job_ids).toEqual([]);
    expect((await getJob(job.id)).route_id).toBeNull();
    await server.services.engine.transition(asDispatcher(), 'route', one.id, { kind: 'phase', event: 'cancel' });
    const next = await server.services.engine.command(asDispatcher(), 'test:next', (scope) => openRouteFor(scope, input));
    expect(next.id).not.toBe(one.id);
  });

  it("keeps sites apart: another site's route and jobs are 404", async () => {
    const job = await createJob(acme.as.dispatcher);
    const route = await plan({ job_ids: [job.id] });
    expect((await globex.as.admin.get<Failure>(`/api/route?id=${route.id}`)).status).toBe(404);
    expect((await globex.as.admin.put<Failure>('/api/route', { id: route.id, name: 'Mine' })).status).toBe(404);
    expect((await globex.as.admin.get<Many<Route>>('/api/route/search')).body.meta.pagination.totalItems).toBe(0);
    const theirs = await globex.as.admin.post<One<Route>>('/api/route', { service_date: DAY });
    const steal = await globex.as.admin.put<Failure>('/api/route', { id: theirs.body.data.id, add_job_ids: [job.id] });
    expect([steal.status, steal.body.fields?.[0]?.field]).toEqual([404, 'add_job_ids.0']);
    const foreignDriver = await globex.as.admin.post<Failure>('/api/route', { service_date: DAY, driver_user_id: acme.users.driver.id });
    expect([foreignDriver.status, foreignDriver.body.fields?.[0]?.field]).toEqual([404, 'driver_user_id']);
    expect((await getRoute(route.id)).job_ids).toEqual([job.id]);
  });

  it('refuses bad input with 400 naming the field, and other roles with 403', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'service_date'],
      [{ service_date: '21/11/2026' }, 'service_date'],
      [{ service_date: '2026-02-30' }, 'service_date'],
      [{ service_date: DAY, name: '' }, 'name'],
      [{ service_date: DAY, colour: 'red' }, 'colour'],
      [{ service_date: DAY, job_ids: 'job_1' }, 'job_ids'],
    ];
    for (const [body, field] of cases) {
      const response = await acme.as.dispatcher.post<Failure>('/api/route', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(response.body), JSON.stringify(body)).toContain(field);
    }
    const route = await plan({});
    const nulled = await acme.as.dispatcher.put<Failure>('/api/route', { id: route.id, name: null });
    expect(nulled.status).toBe(400);
    const vehicle = await acme.as.dispatcher.put<Failure>('/api/route', { id: route.id, vehicle_id: 'veh_unknown' });
    expect([vehicle.status, vehicle.body.fields?.[0]?.field]).toEqual([404, 'vehicle_id']);
    const sort = await acme.as.dispatcher.get<Failure>('/api/route/search?sort=colour');
    expect([sort.status, sort.body.code]).toEqual([400, 'INVALID_SORT']);
    expect((await acme.as.customer.get(`/api/route?id=${route.id}`)).status).toBe(403);
    expect((await driver.post('/api/route', { service_date: DAY })).status).toBe(403);
    expect((await acme.as.dispatcher.post('/api/driver/route/start', { route_id: route.id })).status).toBe(403);
    expect((await getRoute(route.id)).version).toBe(1);
  });
});
