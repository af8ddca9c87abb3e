import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { sleep, waitFor } from '../support/wait-for.ts';
import { createDriver, createTeam, createVehicle, jobAt } from './dispatch-fixtures.ts';

type One<T> = { data: T };
type Dispatch = { id: string; job_id: string | null; route_id: string | null; status: string; is_active?: boolean; dispatch_at: string | null; assigned_to_driver_id: string | null };
type RouteResult = { scheduled: boolean; dispatch: Dispatch | null; dispatched_job_ids: string[]; selected_driver_id: string | null; route: { id: string } | null };
type BulkResult = { scheduled: boolean; dispatches: Dispatch[]; routes: { driver_id: string; dispatched_job_ids: string[]; optimized: boolean }[]; failed_jobs: { job_id: string; code: string }[]; succeeded: string[]; failed: { id: string; code: string }[] };

const PARIS = { lat: 48.8566, lng: 2.3522 };
const near = (km: number) => ({ lat: PARIS.lat + km / 111, lng: PARIS.lng });

let server: TestServer;
let acme: SiteFixture;
let vehicle: string;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
  acme = await createSiteFixture(server, 'acme');
  vehicle = await createVehicle(acme);
}, 60_000);
afterAll(() => server.close());

/** Start times on the wall clock: the durable queue delays by real time. */
const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

const jobRow = (jobId: string) => acme.as.dispatcher.get<One<{ phase: string; driver_user_id: string | null }>>(`/api/job/${jobId}`).then((r) => r.body.data);

/** How many times the job was moved to assigned (one per dispatch that really ran). */
async function dispatchMoves(jobId: string): Promise<number> {
  const rows = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
    em.execute<{ n: string }[]>("select count(*) as n from audit_record where entity_id = ? and action = 'state_change' and new_data->>'event' = 'job.dispatch'", [jobId]),
  );
  return Number(rows[0]!.n);
}

async function route(jobIds: string[], name: string): Promise<string> {
  const created = await acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name, service_date: '2030-01-03', job_ids: jobIds });
  expect(created.status).toBe(201);
  return created.body.data.id;
}

describe('start_at in the future on route and bulk dispatch (durable delayed jobs)', () => {
  it('POST /dispatch/route stores a pending route dispatch and carries it out once when due', async () => {
    const driver = await createDriver(server, acme, { name: 'Later Lou', at: near(1), vehicleId: vehicle });
    const jobs = [await jobAt(acme.as.dispatcher, PARIS), await jobAt(acme.as.dispatcher, near(1))];
    const routeId = await route(jobs.map((j) => j.id), 'Later route');
    const startAt = inSeconds(3);
    const scheduled = await acme.as.dispatcher.post<One<RouteResult>>('/api/dispatch/route', { route_id: routeId, driver_id: driver.id, start_at: startAt });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.data).toMatchObject({ scheduled: true, dispatched_job_ids: [], selected_driver_id: driver.id });
    expect(scheduled.body.data.dispatch).toMatchObject({ status: 'pending', route_id: routeId, job_id: null, dispatch_at: startAt });
    expect((await jobRow(jobs[0]!.id)).phase).toBe('unassigned');

    await waitFor('the delayed route dispatch', async () => (await Promise.all(jobs.map((j) => jobRow(j.id)))).every((j) => j.phase === 'assigned' && j.driver_user_id === driver.id), 20_000);
    expect(Date.now()).toBeGreaterThanOrEqual(new Date(startAt).getTime());
    await sleep(1000);
    for (const job of jobs) expect(await dispatchMoves(job.id)).toBe(1);
    const record = (await acme.as.dispatcher.get<One<Dispatch>>(`/api/dispatch?id=${scheduled.body.data.dispatch!.id}`)).body.data;
    expect(record).toMatchObject({ status: 'completed', assigned_to_driver_id: driver.id });
  }, 60_000);

  it('POST /dispatch/team/route picks the team driver when due; a driver that cannot take it now is refused at once', async () => {
    const team = await createTeam(acme, 'Later team');
    const member = await createDriver(server, acme, { name: 'Later Liz', at: near(1), vehicleId: vehicle, teamIds: [team] });
    const job = await jobAt(acme.as.dispatcher, PARIS);
    const routeId = await route([job.id], 'Later team route');
    const scheduled = await acme.as.dispatcher.post<One<RouteResult>>('/api/dispatch/team/route', { route_id: routeId, team_id: team, start_at: inSeconds(2) });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.data).toMatchObject({ scheduled: true, selected_driver_id: null });
    await waitFor('the delayed team route dispatch', async () => (await jobRow(job.id)).driver_user_id === member.id, 20_000);

    const noVan = await createDriver(server, acme, { name: 'Vanless Val', at: near(1) });
    const other = await route([(await jobAt(acme.as.dispatcher, PARIS)).id], 'Refused route');
    const refused = await acme.as.dispatcher.post<{ code: string }>('/api/dispatch/route', { route_id: other, driver_id: noVan.id, start_at: inSeconds(60) });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('VEHICLE_REQUIRED');
    // A job assigned for later to a driver without a vehicle is refused at once too, and nothing is stored.
    const laterJob = await jobAt(acme.as.dispatcher, PARIS);
    const assignLater = await acme.as.dispatcher.post<{ code: string }>('/api/dispatch/assign', { job_id: laterJob.id, driver_id: noVan.id, start_at: inSeconds(60) });
    expect([assignLater.status, assignLater.body.code]).toEqual([422, 'VEHICLE_REQUIRED']);
    const unknownVehicle = await acme.as.dispatcher.post<{ code: string; fields: { field: string }[] }>('/api/dispatch/assign', { job_id: laterJob.id, driver_id: noVan.id, vehicle_id: 'veh_missing', start_at: inSeconds(60) });
    expect([unknownVehicle.status, unknownVehicle.body.fields[0]!.field]).toEqual([404, 'vehicle_id']);
    expect((await acme.as.dispatcher.get<{ data: unknown[] }>(`/api/dispatch/search?job_id=${laterJob.id}`)).body.data).toEqual([]);
    const globex = await createSiteFixture(server, 'globex');
    expect((await globex.as.dispatcher.post('/api/dispatch/route', { route_id: other, driver_id: member.id, start_at: inSeconds(60) })).status).toBe(404);
  }, 60_000);

  it('POST /dispatch/bulk-distribute holds each job with a pending record and distributes the batch (optimized) when due', async () => {
    const team = await createTeam(acme, 'Later bulk team');
    const a = await createDriver(server, acme, { name: 'Bulk Later A', at: near(1), vehicleId: vehicle, teamIds: [team] });
    const b = await createDriver(server, acme, { name: 'Bulk Later B', at: near(20), vehicleId: vehicle, teamIds: [team] });
    const jobs = [await jobAt(acme.as.dispatcher, near(1)), await jobAt(acme.as.dispatcher, near(20))];
    const scheduled = await acme.as.dispatcher.post<One<BulkResult>>('/api/dispatch/bulk-distribute', {
      job_ids: [...jobs.map((j) => j.id), 'job_missing'], team_id: team, optimize_routes: true, start_at: inSeconds(3),
    });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.data).toMatchObject({ scheduled: true, routes: [], failed_jobs: [{ job_id: 'job_missing', code: 'NOT_FOUND' }] });
    expect(scheduled.body.data.dispatches.map((d) => [d.job_id, d.status])).toEqual(jobs.map((j) => [j.id, 'pending']));
    expect([scheduled.body.data.succeeded, scheduled.body.data.failed.map((f) => [f.id, f.code])]).toEqual([jobs.map((j) => j.id), [['job_missing', 'NOT_FOUND']]]);
    // Held: a second dispatch of a held job is a conflict until the batch runs.
    const again = await acme.as.dispatcher.post<{ code: string }>('/api/dispatch/pool', { job_ids: [jobs[0]!.id] });
    expect(JSON.stringify(again.body)).toContain('ALREADY_DISPATCHED');
    const now = await acme.as.dispatcher.post<One<BulkResult>>('/api/dispatch/bulk-distribute', { job_ids: [jobs[0]!.id], team_id: team, optimize_routes: true });
    expect(now.body.data.failed_jobs).toEqual([expect.objectContaining({ job_id: jobs[0]!.id, code: 'ALREADY_DISPATCHED' })]);

    await waitFor('the delayed bulk distribution', async () => (await Promise.all(jobs.map((j) => jobRow(j.id)))).every((j) => j.phase === 'assigned'), 20_000);
    expect((await jobRow(jobs[0]!.id)).driver_user_id).toBe(a.id);
    expect((await jobRow(jobs[1]!.id)).driver_user_id).toBe(b.id);
    await sleep(1000);
    for (const [i, job] of jobs.entries()) {
      expect(await dispatchMoves(job.id)).toBe(1);
      // The scheduled record itself is the one that was carried out (no second record).
      const records = (await acme.as.dispatcher.get<{ data: Dispatch[] }>(`/api/dispatch/search?job_id=${job.id}`)).body.data;
      expect(records.map((r) => [r.id, r.status])).toEqual([[scheduled.body.data.dispatches[i]!.id, 'processing']]);
    }
  }, 60_000);
});
