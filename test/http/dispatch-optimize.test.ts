import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob, type JobBody } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { createDriver, createTeam, jobAt } from './dispatch-fixtures.ts';

type One<T> = { data: T };
type Bulk = {
  routes: { route_id: string; driver_id: string; optimized: boolean; dispatched_job_ids: string[] }[];
  failed_jobs: { job_id: string; code: string; error: string }[];
};
type Route = { id: string; driver_user_id: string; stops: { id: string; job_id: string; type: string; order: number }[] };

const PARIS = { lat: 48.8566, lng: 2.3522 };
const at = (northKm: number, eastKm: number) => ({ lat: PARIS.lat + northKm / 111, lng: PARIS.lng + eastKm / 73 });

let server: TestServer;
let acme: SiteFixture;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
  acme = await createSiteFixture(server, 'acme');
}, 60_000);
afterAll(() => server.close());

async function vehicleWithItems(items: number | null, name: string): Promise<string> {
  const response = await acme.as.admin.post<One<{ id: string }>>('/api/vehicle', { name, type: 'van', ...(items === null ? {} : { capacity: { items } }) });
  expect(response.status).toBe(201);
  return response.body.data.id;
}

const distribute = (body: Record<string, unknown>) => acme.as.dispatcher.post<One<Bulk>>('/api/dispatch/bulk-distribute', { optimize_routes: true, time_budget_ms: 300, ...body });

describe('bulk distribute with optimize_routes (the route optimizer)', () => {
  it('assigns the jobs over three drivers near them, every pickup before its dropoff on the same route', async () => {
    const team = await createTeam(acme, 'Optimized team');
    const van = await vehicleWithItems(null, 'Opt van');
    // Three drivers far apart (west, centre, east), two jobs near each.
    const drivers = [
      await createDriver(server, acme, { name: 'West Wes', at: at(0, -30), vehicleId: van, teamIds: [team] }),
      await createDriver(server, acme, { name: 'Mid Mia', at: at(0, 0), vehicleId: van, teamIds: [team] }),
      await createDriver(server, acme, { name: 'East Eve', at: at(0, 30), vehicleId: van, teamIds: [team] }),
    ];
    // Left out of the plan, and counted in every decision: one offline, two without a vehicle.
    await createDriver(server, acme, { name: 'Off Olga', at: at(0, 0), vehicleId: van, teamIds: [team], availability: 'offline' });
    for (const name of ['Walk Will', 'Walk Wanda']) await createDriver(server, acme, { name, at: at(0, 0), teamIds: [team] });
    const near = new Map<string, string>();
    const jobs: JobBody[] = [];
    for (const [i, driver] of drivers.entries()) {
      for (const k of [1, 2]) {
        const job = await jobAt(acme.as.dispatcher, at(k, (i - 1) * 30));
        near.set(job.id, driver.id);
        jobs.push(job);
      }
    }
    const done = await distribute({ job_ids: jobs.map((j) => j.id), team_id: team });
    expect(done.status).toBe(200);
    expect(done.body.data.failed_jobs).toEqual([]);
    expect(done.body.data.routes).toHaveLength(3);
    for (const planned of done.body.data.routes) {
      expect(planned.optimized).toBe(true);
      // Each driver gets the two jobs next to them: anything else costs an hour of driving.
      expect(planned.dispatched_job_ids.map((id) => near.get(id))).toEqual([planned.driver_id, planned.driver_id]);
      const route = (await acme.as.dispatcher.get<One<Route>>(`/api/route?id=${planned.route_id}`)).body.data;
      expect(route.driver_user_id).toBe(planned.driver_id);
      for (const jobId of planned.dispatched_job_ids) {
        const pickup = route.stops.find((s) => s.job_id === jobId && s.type === 'pickup')!;
        const dropoff = route.stops.find((s) => s.job_id === jobId && s.type === 'dropoff')!;
        expect(pickup.order).toBeLessThan(dropoff.order);
      }
    }
    const phases = await Promise.all(jobs.map(async (j) => (await acme.as.dispatcher.get<One<{ phase: string; driver_user_id: string }>>(`/api/job/${j.id}`)).body.data));
    expect(phases.every((j) => j.phase === 'assigned' && near.get(jobs[phases.indexOf(j)]!.id) === j.driver_user_id)).toBe(true);

    // The decision says the optimizer chose, with the planned arrival, and who was left out.
    type Decision = { tie_rule: string; winner: { driver_id: string }; considered: number; eligible: number; exclusions: { reason: string }[]; excluded_by_reason: Record<string, number> };
    const [record] = (await acme.as.dispatcher.get<{ data: { decision: Decision }[] }>(`/api/dispatch/search?job_id=${jobs[0]!.id}`)).body.data;
    expect(record!.decision.tie_rule).toMatch(/optimizer/);
    expect(record!.decision.winner.driver_id).toBe(drivers[0]!.id);
    expect({ considered: record!.decision.considered, eligible: record!.decision.eligible }).toEqual({ considered: 6, eligible: 3 });
    expect(record!.decision.exclusions.map((e) => e.reason).toSorted()).toEqual(['no_vehicle', 'no_vehicle', 'not_available']);
    expect(record!.decision.excluded_by_reason).toEqual({ not_available: 1, no_vehicle: 2 });
  }, 60_000);

  it('reports the jobs it cannot place: too big for every vehicle, a window no driver can reach, no room left', async () => {
    const team = await createTeam(acme, 'Small team');
    const tiny = await vehicleWithItems(2, 'Two-item van');
    const driver = await createDriver(server, acme, { name: 'Small Sam', at: PARIS, vehicleId: tiny, teamIds: [team] });
    // Single-stop jobs are visits: each takes one item of the van from the start.
    const visit = (point: { lat: number; lng: number }, window?: { after: Date; before: Date }) =>
      createJob(acme.as.dispatcher, {
        stops: [{ type: 'dropoff', street_address: '3 Test Street', city: 'Paris', point, ...(window ? { complete_after: window.after.toISOString(), complete_before: window.before.toISOString() } : {}) }],
      });
    const now = server.clock.now().getTime();
    const fits = [await visit(at(1, 0)), await visit(at(2, 0)), await visit(at(3, 0))];
    // 300 km away, to be done within 20 minutes from now: unreachable whatever the order.
    const far = await visit(at(300, 0), { after: new Date(now), before: new Date(now + 20 * 60_000) });
    const done = await distribute({ job_ids: [...fits.map((j) => j.id), far.id], team_id: team });
    expect(done.status).toBe(200);
    expect(done.body.data.routes).toHaveLength(1);
    expect(done.body.data.routes[0]!.driver_id).toBe(driver.id);
    expect(done.body.data.routes[0]!.dispatched_job_ids).toHaveLength(2);
    const failures = new Map(done.body.data.failed_jobs.map((f) => [f.job_id, f.code]));
    expect(failures.get(far.id)).toBe('TIME_WINDOW_INFEASIBLE');
    expect(fits.filter((j) => failures.get(j.id) === 'FLEET_EXHAUSTED')).toHaveLength(1);
    expect(failures.size).toBe(2);
    const left = (await acme.as.dispatcher.get<One<{ phase: string }>>(`/api/job/${far.id}`)).body.data;
    expect(left.phase).toBe('unassigned');

    const noRoomTeam = await createTeam(acme, 'No room team');
    const empty = await vehicleWithItems(0, 'Full van');
    await createDriver(server, acme, { name: 'Full Fay', at: PARIS, vehicleId: empty, teamIds: [noRoomTeam] });
    const job = await jobAt(acme.as.dispatcher, at(1, 1));
    const refused = await distribute({ job_ids: [job.id], team_id: noRoomTeam });
    expect(refused.body.data.failed_jobs).toEqual([expect.objectContaining({ job_id: job.id, code: 'CAPACITY_EXCEEDED' })]);
  }, 60_000);

  it('leaves the balancing strategy alone when optimize_routes is false, and another site cannot use the team', async () => {
    const team = await createTeam(acme, 'Plain team');
    const van = await vehicleWithItems(null, 'Plain van');
    await createDriver(server, acme, { name: 'Plain Pia', at: PARIS, vehicleId: van, teamIds: [team] });
    const job = await jobAt(acme.as.dispatcher, at(1, 0));
    const done = await acme.as.dispatcher.post<One<Bulk>>('/api/dispatch/bulk-distribute', { job_ids: [job.id], team_id: team });
    expect(done.body.data.routes.map((r) => r.optimized)).toEqual([false]);
    const globex = await createSiteFixture(server, 'globex');
    expect((await globex.as.dispatcher.post('/api/dispatch/bulk-distribute', { job_ids: [job.id], team_id: team, optimize_routes: true })).status).toBe(404);
  }, 60_000);
});
