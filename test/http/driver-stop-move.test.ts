import { beforeAll, describe, expect, it } from 'vitest';
import { sessionClient, type SiteFixture } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createJob, stateIds, type JobBody } from '../support/job-fixtures.ts';
import type { TestServer } from '../support/test-server.ts';
import { useTwoSites } from '../support/two-sites.ts';

// POST /driver/stop/state decides the job's and the route's cascades from the rows it read in its first statement
// and builds its answer without reading the job again: these tests hold it to what later reads show.

type One<T = Record<string, unknown>> = { data: T };
type Failure = { code: string };
type Job = JobBody & { completed_at: string | null; route_id: string | null };
type Route = { id: string; phase: string; job_ids: string[]; started_at: string | null; completed_at: string | null; version: number };

let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
let driver: ApiClient;
let jobStates: Record<string, string>;
let stopStates: Record<string, string>;

/** A job of acme's driver, dispatched. */
async function driversJob(): Promise<Job> {
  const job = await createJob(acme.as.dispatcher, { driver_user_id: acme.users.driver.id });
  await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched });
  return job as Job;
}

/** A route of acme's driver with these jobs, dispatched by the office; started by the driver when told. */
async function routeOf(jobs: Job[], started: boolean): Promise<Route> {
  const created = await acme.as.dispatcher.post<One<Route>>('/api/route', { service_date: '2026-11-21', driver_user_id: acme.users.driver.id, job_ids: jobs.map((j) => j.id) });
  if (created.status !== 201) throw new Error(`route create failed: ${created.text}`);
  const actor = { userId: acme.users.dispatcher.id, applicationId: null, requestId: 'test', role: 'dispatcher' as const };
  await server.services.engine.transition({ siteId: acme.site.id, actor }, 'route', created.body.data.id, { kind: 'phase', event: 'dispatch' });
  if (started && (await driver.post('/api/driver/route/start', { route_id: created.body.data.id })).status !== 200) throw new Error('route start failed');
  return created.body.data;
}

const readJob = async (id: string) => (await driver.get<One<Job>>(`/api/job/${id}`)).body.data;
const readRoute = async (id: string) => (await acme.as.dispatcher.get<One<Route>>(`/api/route?id=${id}`)).body.data;

/** Drives every stop of the job through en route, arrived and completed, checking each answer against a later read. */
async function driveJob(job: Job): Promise<void> {
  for (const stop of job.stops) {
    for (const state of ['en_route', 'arrived', 'completed']) {
      const moved = await driver.post<One<Job>>('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[state] });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toEqual(await readJob(job.id));
    }
  }
}

const sites = useTwoSites();

beforeAll(async () => {
  ({ server, acme, globex } = sites);
  jobStates = await stateIds(acme.as.admin, 'job');
  stopStates = await stateIds(acme.as.admin, 'stop');
  driver = await sessionClient(server, 'acme', acme.users.driver);
});

describe('a driver moving stops', () => {
  it('is answered with the job as a later read shows it, and the job completes with its last stop', async () => {
    const job = await driversJob();
    const first = job.stops[0]!.id;
    const started = await driver.post<One<Job>>('/api/driver/stop/state', { stop_id: first, workflow_state_id: stopStates.en_route });
    expect(started.body.data).toMatchObject({ phase: 'in_progress', stops: [{ phase: 'in_progress' }, { phase: 'assigned' }] });
    expect(started.body.data).toEqual(await readJob(job.id));
    for (const state of ['arrived', 'completed']) {
      const moved = await driver.post<One<Job>>('/api/driver/stop/state', { stop_id: first, workflow_state_id: stopStates[state] });
      expect(moved.body.data).toEqual(await readJob(job.id));
    }
    expect((await readJob(job.id)).phase).toBe('in_progress');
    const last = job.stops[1]!.id;
    for (const state of ['en_route', 'arrived', 'completed']) {
      const moved = await driver.post<One<Job>>('/api/driver/stop/state', { stop_id: last, workflow_state_id: stopStates[state] });
      expect(moved.body.data).toEqual(await readJob(job.id));
    }
    expect(await readJob(job.id)).toMatchObject({ phase: 'completed', completed_at: expect.any(String), stops: [{ phase: 'completed' }, { phase: 'completed' }] });
  });

  it('refuses a move the workflow does not allow, writing nothing', async () => {
    const job = await driversJob();
    const stop = job.stops[0]!.id;
    for (const state of ['en_route', 'arrived', 'completed']) await driver.post('/api/driver/stop/state', { stop_id: stop, workflow_state_id: stopStates[state] });
    const before = await readJob(job.id);
    const refused = await driver.post<Failure>('/api/driver/stop/state', { stop_id: stop, workflow_state_id: stopStates.en_route });
    expect([refused.status, refused.body.code]).toEqual([409, 'INVALID_TRANSITION']);
    expect(await readJob(job.id)).toEqual(before);
  });

  it("completes the route when the last stop of its last open job completes, and not before", async () => {
    const [one, two] = [await driversJob(), await driversJob()];
    const route = await routeOf([one, two], true);
    await driveJob(one);
    expect(await readRoute(route.id)).toMatchObject({ phase: 'in_progress', completed_at: null });
    await driveJob(two);
    expect(await readRoute(route.id)).toMatchObject({ phase: 'completed', completed_at: expect.any(String) });
    expect((await readJob(two.id)).phase).toBe('completed');
  });

  it('starts and completes a route its driver never started', async () => {
    const job = await driversJob();
    const route = await routeOf([job], false);
    expect((await readRoute(route.id)).started_at).toBeNull();
    await driveJob(job);
    expect(await readRoute(route.id)).toMatchObject({ phase: 'completed', started_at: expect.any(String), completed_at: expect.any(String) });
  });

  it('completes the job when its last two stops are completed at the same time', async () => {
    for (let round = 0; round < 5; round += 1) {
      const job = await driversJob();
      for (const stop of job.stops) {
        for (const state of ['en_route', 'arrived']) await driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[state] });
      }
      const moves = await Promise.all(job.stops.map((stop) => driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates.completed })));
      expect(moves.map((move) => move.status)).toEqual([200, 200]);
      expect(await readJob(job.id)).toMatchObject({ phase: 'completed', stops: [{ phase: 'completed' }, { phase: 'completed' }] });
    }
  });

  it('completes the route when the last stops of its last two open jobs are completed at the same time', async () => {
    for (let round = 0; round < 5; round += 1) {
      const jobs = [await driversJob(), await driversJob()];
      const route = await routeOf(jobs, true);
      const lastStops = jobs.map((job) => job.stops.at(-1)!);
      for (const job of jobs) {
        for (const stop of job.stops) {
          const states = stop === job.stops.at(-1) ? ['en_route', 'arrived'] : ['en_route', 'arrived', 'completed'];
          for (const state of states) await driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[state] });
        }
      }
      const moves = await Promise.all(lastStops.map((stop) => driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates.completed })));
      expect(moves.map((move) => move.status)).toEqual([200, 200]);
      expect(await readRoute(route.id)).toMatchObject({ phase: 'completed' });
    }
  });

  it('answers a stop move and the office cancelling its job at the same time, whichever wins (never a server error)', async () => {
    // The move locks its stop, then its job (a sibling is still open); the cancel locks the job, then its stops. When
    // PostgreSQL picks one of the two as a deadlock's victim, the engine runs it again instead of answering 500.
    for (let round = 0; round < 8; round += 1) {
      const job = await driversJob();
      for (const state of ['en_route', 'arrived']) await driver.post('/api/driver/stop/state', { stop_id: job.stops[0]!.id, workflow_state_id: stopStates[state] });
      const [move, cancel] = await Promise.all([
        driver.post('/api/driver/stop/state', { stop_id: job.stops[0]!.id, workflow_state_id: stopStates.completed }),
        acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.cancelled }),
      ]);
      expect(cancel.status, cancel.text).toBe(200);
      expect([200, 409], move.text).toContain(move.status);
      const after = await readJob(job.id);
      expect(after.phase).toBe('cancelled');
      expect(after.stops.map((stop) => stop.phase)).toEqual([move.status === 200 ? 'completed' : 'cancelled', 'cancelled']);
    }
  });

  it("answers 404 for another site's stop, and changes nothing", async () => {
    const job = await driversJob();
    const stranger = await sessionClient(server, 'globex', globex.users.driver);
    const foreign = await stranger.post<Failure>('/api/driver/stop/state', { stop_id: job.stops[0]!.id, workflow_state_id: stopStates.en_route });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
    expect(await readJob(job.id)).toMatchObject({ phase: 'assigned', version: job.version + 1, stops: [{ phase: 'assigned' }, { phase: 'assigned' }] });
  });
});
