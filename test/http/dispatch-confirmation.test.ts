import { beforeAll, describe, expect, it } from 'vitest';
import { stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from './dispatch-fixtures.ts';

// A dispatch sent with require_confirmation waits for its driver. The driver may take the job on by moving it
// (POST /job/state, or a stop move that starts it) instead of POST /dispatch/accept: the record and the job must
// still agree, and /dispatch/accept must still answer.

type One<T> = { data: T };
type Dispatch = { id: string; status: string; driver_accepted: boolean; driver_accepted_at: string | null; version: number; is_active: boolean };
type Job = { id: string; phase: string; version: number; workflow_state: { key: string }; stops: { id: string }[] };
type Failure = { code: string };

const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
const PARIS = { lat: 48.8566, lng: 2.3522 };
let driver: TestDriver;
let jobStates: Record<string, string>;
let stopStates: Record<string, string>;

beforeAll(async () => {
  driver = await createDriver(site.server, site.acme, { name: 'Eager Eve', at: PARIS, vehicleId: await createVehicle(site.acme) });
  jobStates = await stateIds(site.acme.as.admin, 'job');
  stopStates = await stateIds(site.acme.as.admin, 'stop');
}, 60_000);

/** A job dispatched to the driver with `require_confirmation`, and its pending dispatch record. */
async function awaitingConfirmation(): Promise<{ job: Job; dispatchId: string }> {
  const job = (await jobAt(site.acme.as.dispatcher, PARIS)) as Job;
  const sent = await site.acme.as.dispatcher.post<One<{ dispatch: Dispatch }>>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id, require_confirmation: true });
  expect(sent.body.data.dispatch).toMatchObject({ status: 'pending', driver_accepted: false });
  return { job, dispatchId: sent.body.data.dispatch.id };
}

const dispatchOf = async (id: string) => (await site.acme.as.dispatcher.get<One<Dispatch>>(`/api/dispatch?id=${id}`)).body.data;
const jobOf = async (id: string) => (await site.acme.as.admin.get<One<Job>>(`/api/job/${id}`)).body.data;
const auditActions = async (id: string) => (await site.acme.as.admin.get<One<{ action: string }[]>>(`/api/audit/search?entity_id=${id}`)).body.data.map((r) => r.action);

describe('a dispatch waiting for confirmation, and the driver moving the job themself', () => {
  it('accepting the job through /job/state accepts the dispatch; /dispatch/accept then answers it without moving the job again', async () => {
    const { job, dispatchId } = await awaitingConfirmation();
    const moved = await driver.client.post<One<Job>>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.accepted });
    expect(moved.status).toBe(200);
    const accepted = await dispatchOf(dispatchId);
    expect(accepted).toMatchObject({ status: 'processing', driver_accepted: true, is_active: true });
    expect(accepted.driver_accepted_at).not.toBeNull();
    expect(await auditActions(dispatchId)).toContain('accept');

    const before = await jobOf(job.id);
    const answer = await driver.client.post<One<Dispatch>>('/api/dispatch/accept', { dispatch_id: dispatchId });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ status: 'processing', driver_accepted: true, version: accepted.version });
    expect(await jobOf(job.id)).toEqual(before);
  });

  it('starting the job with a stop move accepts the dispatch in the same transaction', async () => {
    const { job, dispatchId } = await awaitingConfirmation();
    const moved = await driver.client.post<One<Job>>('/api/driver/stop/state', { stop_id: job.stops[0]!.id, workflow_state_id: stopStates.en_route });
    expect([moved.status, moved.body.data.phase]).toEqual([200, 'in_progress']);
    expect(await dispatchOf(dispatchId)).toMatchObject({ status: 'processing', driver_accepted: true });
    expect((await driver.client.post('/api/dispatch/accept', { dispatch_id: dispatchId })).status).toBe(200);
    expect((await jobOf(job.id)).phase).toBe('in_progress');
  });

  it('staff moving the job on is not an acceptance; the driver accepting afterwards records it without a second job move', async () => {
    const { job, dispatchId } = await awaitingConfirmation();
    expect((await site.acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.accepted })).status).toBe(200);
    expect(await dispatchOf(dispatchId)).toMatchObject({ status: 'pending', driver_accepted: false });
    const before = await jobOf(job.id);
    const answer = await driver.client.post<One<Dispatch>>('/api/dispatch/accept', { dispatch_id: dispatchId });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ status: 'processing', driver_accepted: true });
    expect(await jobOf(job.id)).toEqual(before);
  });

  it('a driver who started the job cannot give it back: 409, and the job and its accepted dispatch stay as they were', async () => {
    const { job, dispatchId } = await awaitingConfirmation();
    await driver.client.post('/api/driver/stop/state', { stop_id: job.stops[0]!.id, workflow_state_id: stopStates.en_route });
    const returned = await driver.client.post<Failure>('/api/driver/job/return', { job_id: job.id });
    expect([returned.status, returned.body.code]).toEqual([409, 'INVALID_TRANSITION']);
    expect(await dispatchOf(dispatchId)).toMatchObject({ status: 'processing', driver_accepted: true, is_active: true });
    expect((await jobOf(job.id)).phase).toBe('in_progress');
  });
});
