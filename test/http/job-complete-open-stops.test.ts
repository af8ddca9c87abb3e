import { beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from './dispatch-fixtures.ts';

// A job completes when its last stop ends. Completed straight away with stops still open, those stops would stay
// open for good, their proof and notes never asked for, while its route completed and earnings counted. A failure
// (the driver gives up on a refused delivery) ends the job at once: its open stops are cancelled with the reason.

type One<T> = { data: T };
type Stop = { id: string; phase: string; cancellation_notes: string | null };
type Job = { id: string; phase: string; version: number; route_id: string | null; cancellation_notes: string | null; workflow_state_id: string; stops: Stop[] };
type Failure = { code: string; details?: { open_stop_ids?: string[] } };

const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
const PARIS = { lat: 48.8566, lng: 2.3522 };
let driver: TestDriver;
let jobStates: Record<string, string>;
let stopStates: Record<string, string>;

beforeAll(async () => {
  driver = await createDriver(site.server, site.acme, { name: 'Hasty Hal', at: PARIS, vehicleId: await createVehicle(site.acme) });
  jobStates = await stateIds(site.acme.as.admin, 'job');
  stopStates = await stateIds(site.acme.as.admin, 'stop');
}, 60_000);

/** A job dispatched to the driver and started by them through /job/state, its stops still open. */
async function startedJob(): Promise<Job> {
  const job = await jobAt(site.acme.as.dispatcher, PARIS);
  expect((await site.acme.as.dispatcher.post('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id })).status).toBe(200);
  const started = await driver.client.post<One<Job>>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.in_progress });
  expect([started.status, started.body.data.phase]).toEqual([200, 'in_progress']);
  return started.body.data;
}

const jobOf = async (id: string) => (await site.acme.as.admin.get<One<Job>>(`/api/job/${id}`)).body.data;
const writes = async () =>
  Number(
    (await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
      em.execute<{ n: number }[]>('select (select count(*) from audit_record) + (select count(*) from outbox) as n'),
    ))[0]!.n,
  );

describe('a job moved to a completed phase while a stop is open', () => {
  it('is refused for its driver when completed, with 409 JOB_HAS_OPEN_STOPS naming the open stops, and nothing is written', async () => {
    const job = await startedJob();
    const before = await jobOf(job.id);
    const written = await writes();
    const refused = await driver.client.post<Failure>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.completed });
    expect([refused.status, refused.body.code]).toEqual([409, 'JOB_HAS_OPEN_STOPS']);
    expect(refused.body.details?.open_stop_ids).toEqual(job.stops.map((s) => s.id));
    expect(await writes()).toBe(written);
    expect(await jobOf(job.id)).toEqual(before);
    const route = await site.acme.as.admin.get<One<{ phase: string }>>(`/api/route?id=${job.route_id}`);
    expect(route.body.data.phase).not.toBe('completed');
  });

  it('is refused for staff too, naming only the stops still open', async () => {
    const job = await startedJob();
    const [first, second] = [job.stops[0]!, job.stops[1]!];
    for (const state of ['en_route', 'arrived', 'completed']) {
      expect((await driver.client.post('/api/driver/stop/state', { stop_id: first.id, workflow_state_id: stopStates[state] })).status).toBe(200);
    }
    const refused = await site.acme.as.dispatcher.post<Failure>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.completed });
    expect([refused.status, refused.body.code, refused.body.details?.open_stop_ids]).toEqual([409, 'JOB_HAS_OPEN_STOPS', [second.id]]);
    // The normal way still works: the last stop ended completes the job.
    for (const state of ['en_route', 'arrived', 'completed']) {
      expect((await driver.client.post('/api/driver/stop/state', { stop_id: second.id, workflow_state_id: stopStates[state] })).status).toBe(200);
    }
    expect((await jobOf(job.id)).phase).toBe('completed');
  });
});

describe('a job failed while a stop is open', () => {
  it('is failed for its driver with the reason, and its open stops are cancelled with that reason, in the same command', async () => {
    const job = await startedJob();
    const [first, second] = [job.stops[0]!, job.stops[1]!];
    for (const state of ['en_route', 'arrived', 'completed']) {
      expect((await driver.client.post('/api/driver/stop/state', { stop_id: first.id, workflow_state_id: stopStates[state] })).status).toBe(200);
    }
    const reason = 'Recipient refused the parcel';
    const failed = await driver.client.post<One<Job>>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.failed, cancellation_notes: reason });
    expect(failed.status).toBe(200);
    expect([failed.body.data.workflow_state_id, failed.body.data.phase, failed.body.data.cancellation_notes]).toEqual([jobStates.failed, 'completed', reason]);
    const after = await jobOf(job.id);
    expect(after.workflow_state_id).toBe(jobStates.failed);
    // The completed pickup keeps its state; the open dropoff is cancelled with the reason.
    expect(after.stops.map((s) => [s.id, s.phase, s.cancellation_notes])).toEqual([
      [first.id, 'completed', null],
      [second.id, 'cancelled', reason],
    ]);
  });
});
