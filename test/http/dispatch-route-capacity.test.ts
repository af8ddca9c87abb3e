import { expect, it } from 'vitest';
import { useOneSite } from '../support/one-site.ts';
import { waitFor } from '../support/wait-for.ts';
import { createDriver, createTeam, createVehicle, jobAt, type TestDriver } from './dispatch-fixtures.ts';

/**
 * A route dispatched as a whole gives every unassigned job to one driver, and a driver's max_load caps their open
 * jobs: the team's pick must have room for the route's jobs, and the jobs that still cannot go are reported, also
 * when the dispatch was scheduled and nobody awaits its answer.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

type One<T> = { data: T };
type FailedJob = { job_id: string; code: string };
type RouteResult = { selected_driver_id: string; dispatched_job_ids: string[]; failed_jobs: FailedJob[]; dispatch: { id: string } | null };
type DispatchRecord = { status: string; assigned_to_driver_id: string | null; decision: { failed_jobs?: FailedJob[] } | null };

const PARIS = { lat: 48.8566, lng: 2.3522 };
const near = (km: number) => ({ lat: PARIS.lat + km / 111, lng: PARIS.lng });

async function routeOf(jobCount: number, name: string): Promise<{ id: string; jobIds: string[] }> {
  const jobIds: string[] = [];
  for (let i = 0; i < jobCount; i++) jobIds.push((await jobAt(site.acme.as.dispatcher, PARIS)).id);
  const created = await site.acme.as.dispatcher.post<One<{ id: string }>>('/api/route', { name, service_date: '2030-01-03', job_ids: jobIds });
  expect(created.status).toBe(201);
  return { id: created.body.data.id, jobIds };
}

/** Gives the driver `count` open jobs of their own. */
async function load(driver: TestDriver, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const job = await jobAt(site.acme.as.dispatcher, PARIS);
    const assigned = await site.acme.as.dispatcher.post('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id });
    expect(assigned.status).toBe(200);
  }
}

it('a team route goes to a driver with room for all its jobs, not to the nearest one at their max_load after one', async () => {
  const team = await createTeam(site.acme, 'Roomy team');
  const vehicle = await createVehicle(site.acme, 'Roomy van');
  const nearest = await createDriver(site.server, site.acme, { name: 'Nearly Full', at: PARIS, vehicleId: vehicle, teamIds: [team], maxLoad: 3 });
  const further = await createDriver(site.server, site.acme, { name: 'Further Free', at: near(8), vehicleId: vehicle, teamIds: [team] });
  await load(nearest, 2);
  const route = await routeOf(5, 'Five jobs');

  const answer = await site.acme.as.dispatcher.post<One<RouteResult>>('/api/dispatch/team/route', { route_id: route.id, team_id: team });
  expect(answer.status).toBe(200);
  expect(answer.body.data.selected_driver_id).toBe(further.id);
  expect(answer.body.data.dispatched_job_ids.toSorted()).toEqual(route.jobIds.toSorted());
  expect(answer.body.data.failed_jobs).toEqual([]);
}, 60_000);

it('when no team driver has room for the whole route, the one with the most room takes it and the jobs past their limit are reported', async () => {
  const team = await createTeam(site.acme, 'Tight team');
  const vehicle = await createVehicle(site.acme, 'Tight van');
  const nearest = await createDriver(site.server, site.acme, { name: 'Room One', at: PARIS, vehicleId: vehicle, teamIds: [team], maxLoad: 3 });
  const further = await createDriver(site.server, site.acme, { name: 'Room Two', at: near(8), vehicleId: vehicle, teamIds: [team], maxLoad: 4 });
  await load(nearest, 2);
  await load(further, 2);
  const route = await routeOf(5, 'Too many jobs');

  const answer = await site.acme.as.dispatcher.post<One<RouteResult>>('/api/dispatch/team/route', { route_id: route.id, team_id: team });
  expect(answer.status).toBe(200);
  expect(answer.body.data.selected_driver_id).toBe(further.id);
  expect(answer.body.data.dispatched_job_ids).toHaveLength(2);
  expect(answer.body.data.failed_jobs.map((f) => f.code)).toEqual(['DRIVER_AT_CAPACITY', 'DRIVER_AT_CAPACITY', 'DRIVER_AT_CAPACITY']);
}, 60_000);

it("a scheduled route dispatch keeps the jobs it could not dispatch (the driver's max_load) on its record", async () => {
  const vehicle = await createVehicle(site.acme, 'Later van');
  const driver = await createDriver(site.server, site.acme, { name: 'Later Single', at: PARIS, vehicleId: vehicle, maxLoad: 1 });
  const route = await routeOf(2, 'Later two jobs');
  const startAt = new Date(Date.now() + 2000).toISOString();
  const scheduled = await site.acme.as.dispatcher.post<One<RouteResult>>('/api/dispatch/route', { route_id: route.id, driver_id: driver.id, start_at: startAt });
  expect(scheduled.status).toBe(200);
  const recordId = scheduled.body.data.dispatch!.id;

  const record = await waitFor('the scheduled route dispatch to run', async () => {
    const read = await site.acme.as.dispatcher.get<One<DispatchRecord>>(`/api/dispatch?id=${recordId}`);
    return read.body.data.status === 'completed' ? read.body.data : null;
  }, 20_000);
  expect(record.assigned_to_driver_id).toBe(driver.id);
  const failed = record.decision?.failed_jobs ?? [];
  expect(failed.map((f) => f.code)).toEqual(['DRIVER_AT_CAPACITY']);
  expect(route.jobIds).toContain(failed[0]!.job_id);
}, 60_000);
