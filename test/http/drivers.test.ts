import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createJob, stateIds, type JobBody } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

type One<T = Record<string, unknown>> = { data: T };
type Failure = { code: string; details?: { current_state: string; allowed_moves: string[] } };
type Status = { user_id: string; availability: string; version: number };
type Location = { user_id: string; lat: number | null; lng: number | null; heading: number | null; recorded_at: string | null };
type Job = JobBody & { driver_user_id: string | null; cancellation_notes: string | null };
type Page = { data: Job[]; meta: { pagination: { totalItems: number; pageSize: number } } };

let server: TestServer;
let acme: SiteFixture;
let driver: ApiClient;
let other: { id: string; client: ApiClient };
let jobStates: Record<string, string>;
let stopStates: Record<string, string>;

async function session(email: string, password: string): Promise<ApiClient> {
  const { access_token } = await signIn(server.client('acme'), email, password);
  return server.client('acme').as({ accessToken: access_token });
}

/** A job of the fixture's driver, dispatched (assigned phase) unless told otherwise. */
async function driversJob(dispatch = true): Promise<JobBody> {
  const job = await createJob(acme.as.dispatcher, { driver_user_id: acme.users.driver.id });
  if (dispatch) await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched });
  return job;
}

const at = (offsetMs: number) => new Date(server.clock.now().getTime() + offsetMs).toISOString();

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  jobStates = await stateIds(acme.as.admin, 'job');
  stopStates = await stateIds(acme.as.admin, 'stop');
  driver = await session(acme.users.driver.email, acme.users.driver.password);
  const created = await acme.as.admin.post<One<{ id: string }>>('/api/user', { email: 'second.driver@acme.example', password: 'second-driver-pw', role: 'driver' });
  if (created.status !== 201) throw new Error(`second driver create failed: ${created.text}`);
  other = { id: created.body.data.id, client: await session('second.driver@acme.example', 'second-driver-pw') };
});
afterAll(() => server.close());

describe('driver availability', () => {
  it('moves through the machine, one version per change, with an audit record and a driver:status_change event', async () => {
    const online = await driver.put<One<Status>>('/api/driver/status', { availability: 'available' });
    expect(online.status).toBe(200);
    expect(online.body.data).toMatchObject({ user_id: acme.users.driver.id, availability: 'available', version: 1 });
    expect((await driver.put<One<Status>>('/api/driver/status', { availability: 'on_break' })).body.data).toMatchObject({ availability: 'on_break', version: 2 });
    // Asking for the current availability again changes nothing (a retried PUT).
    expect((await driver.put<One<Status>>('/api/driver/status', { availability: 'on_break' })).body.data).toMatchObject({ availability: 'on_break', version: 2 });
    expect((await driver.put<One<Status>>('/api/driver/status', { availability: 'available' })).body.data.version).toBe(3);
    expect((await driver.put<One<Status>>('/api/driver/status', { availability: 'busy' })).body.data.version).toBe(4);

    const events: { payload: { event: string; data: { availability: string; previous_availability: string } }; entity_version: number }[] = await inTenantScope(
      server.services.db.orm,
      { siteId: acme.site.id },
      (em) => em.execute(`select payload, entity_version from outbox where event = 'driver:status_change' and entity_id = ? order by seq`, [acme.users.driver.id]),
    );
    expect(events.map((e) => [e.payload.data.previous_availability, e.payload.data.availability, e.entity_version])).toEqual([
      ['offline', 'available', 1], ['available', 'on_break', 2], ['on_break', 'available', 3], ['available', 'busy', 4],
    ]);
    const audit = await acme.as.admin.get<{ data: { action: string; entity_type: string }[] }>(`/api/audit/search?entity_id=${acme.users.driver.id}&action=status_change`);
    expect(audit.body.data).toHaveLength(4);
    expect(audit.body.data.every((r) => r.entity_type === 'Driver')).toBe(true);
  });

  it('refuses an illegal move with 409 naming the current and allowed availabilities, writing nothing', async () => {
    // The driver is busy from the previous test: a break waits until they are free.
    const refused = await driver.put<Failure>('/api/driver/status', { availability: 'on_break' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'INVALID_TRANSITION', details: { current_state: 'busy', allowed_moves: ['available'] } });
    expect((await driver.put<Failure>('/api/driver/status', { availability: 'offline' })).status).toBe(409);
    expect((await driver.put<One<Status>>('/api/driver/status', { availability: 'available' })).body.data.version).toBe(5);
    // A driver without a row is offline: only going online is legal.
    const fresh = await other.client.put<Failure>('/api/driver/status', { availability: 'busy' });
    expect(fresh.body).toMatchObject({ code: 'INVALID_TRANSITION', details: { current_state: 'offline', allowed_moves: ['available'] } });
    expect((await other.client.put('/api/driver/status', { availability: 'sleeping' })).status).toBe(400);
  });

  it('is for drivers only: a dispatcher (or an API key) gets 403', async () => {
    expect((await acme.as.dispatcher.put('/api/driver/status', { availability: 'available' })).status).toBe(403);
    expect((await acme.as.dispatcher.post('/api/driver/location', { lat: 1, lng: 1, recorded_at: at(0) })).status).toBe(403);
    expect((await acme.as.dispatcher.post('/api/driver/job/search', {})).status).toBe(403);
  });
});

describe('driver location', () => {
  it('keeps the newest fix: older and duplicate ones are answered stale and change nothing', async () => {
    const fix = at(-10_000);
    const first = await driver.post<One<{ accepted: boolean }>>('/api/driver/location', { lat: 48.85, lng: 2.35, heading: 90, speed: 8, accuracy: 5, recorded_at: fix });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ accepted: true });
    const duplicate = await driver.post('/api/driver/location', { lat: 48.85, lng: 2.35, recorded_at: fix });
    expect(duplicate.body).toEqual({ data: { accepted: false, reason: 'stale' } });
    expect((await driver.post('/api/driver/location', { lat: 40, lng: 3, recorded_at: at(-60_000) })).body).toEqual({ data: { accepted: false, reason: 'stale' } });

    const read = await acme.as.dispatcher.get<One<Location>>(`/api/driver/location?user_id=${acme.users.driver.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ user_id: acme.users.driver.id, lat: 48.85, lng: 2.35, heading: 90 });
    expect((await driver.get<One<Location>>('/api/driver/location')).body.data.lat).toBe(48.85);
    // Pings neither bump the availability version nor write audit records.
    expect((await driver.put<One<Status>>('/api/driver/status', { availability: 'available' })).body.data.version).toBe(5);
    const audit = await acme.as.admin.get<{ data: unknown[] }>(`/api/audit/search?entity_type=Driver&entity_id=${acme.users.driver.id}`);
    expect(audit.body.data).toHaveLength(5);
  });

  it('validates ranges and a recorded_at far in the future', async () => {
    expect((await driver.post('/api/driver/location', { lat: 91, lng: 0, recorded_at: at(0) })).status).toBe(400);
    expect((await driver.post('/api/driver/location', { lat: 0, lng: 0, heading: 400, recorded_at: at(0) })).status).toBe(400);
    expect((await driver.post('/api/driver/location', { lat: 0, lng: 0, recorded_at: 'yesterday' })).status).toBe(400);
    const future = await driver.post<Failure>('/api/driver/location', { lat: 0, lng: 0, recorded_at: at(5 * 60_000) });
    expect(future.status).toBe(400);
    expect(future.body.code).toBe('INVALID_RECORDED_AT');
    // A slightly fast device clock is fine.
    expect((await driver.post<One<{ accepted: boolean }>>('/api/driver/location', { lat: 48.9, lng: 2.4, recorded_at: at(20_000) })).body.data.accepted).toBe(true);
  });

  it('is readable by staff, by the driver themself, and not by another driver', async () => {
    expect((await other.client.get(`/api/driver/location?user_id=${acme.users.driver.id}`)).status).toBe(404);
    const own = await other.client.get<One<Location>>('/api/driver/location');
    expect(own.body.data).toMatchObject({ user_id: other.id, lat: null, recorded_at: null });
    expect((await acme.as.admin.get('/api/driver/location')).status).toBe(400);
    expect((await acme.as.admin.get(`/api/driver/location?user_id=${acme.users.customer.id}`)).status).toBe(404);
    expect((await acme.as.customer.get(`/api/driver/location?user_id=${acme.users.driver.id}`)).status).toBe(403);
  });
});

describe('driver job actions', () => {
  it('cancels their own job with the notes, cascading to the stops', async () => {
    const job = await driversJob();
    const cancelled = await driver.post<One<Job>>('/api/driver/job/cancel', { job_id: job.id, cancellation_notes: 'flat tyre' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ phase: 'cancelled', cancellation_notes: 'flat tyre' });
    expect(cancelled.body.data.stops.map((s) => s.phase)).toEqual(['cancelled', 'cancelled']);
    expect((await driver.post('/api/driver/job/cancel', { job_id: job.id })).status).toBe(400);
  });

  it("leaves the decision to the workflow's roles: a driver cannot cancel a job still in created", async () => {
    const job = await driversJob(false);
    const refused = await driver.post<Failure>('/api/driver/job/cancel', { job_id: job.id, cancellation_notes: 'no' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('INVALID_TRANSITION');
    // Nor by cancelling its stops: they move once the job is dispatched.
    for (const stop of job.stops) {
      const stopRefused = await driver.post<Failure>('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates.cancelled });
      expect([stopRefused.status, stopRefused.body.code]).toEqual([409, 'JOB_NOT_DISPATCHED']);
    }
    expect((await acme.as.dispatcher.get<One<Job>>(`/api/job/${job.id}`)).body.data.phase).toBe('unassigned');
  });

  it('returns a job: back to unassigned without a driver, and out of the driver\'s search', async () => {
    const job = await driversJob();
    const mine = async () => (await driver.post<Page>('/api/driver/job/search', { page_size: 100 })).body.data.map((j) => j.id);
    expect(await mine()).toContain(job.id);
    const returned = await driver.post<One<Job>>('/api/driver/job/return', { job_id: job.id });
    expect(returned.status).toBe(200);
    expect(returned.body.data).toMatchObject({ id: job.id, phase: 'unassigned', driver_user_id: null });
    expect(returned.body.data.stops.map((s) => s.phase)).toEqual(['unassigned', 'unassigned']);
    expect(await mine()).not.toContain(job.id);
    expect((await driver.post('/api/driver/job/return', { job_id: job.id })).status).toBe(404);
  });

  it('moves a stop of their job, and the job follows', async () => {
    const job = await driversJob();
    const stop = job.stops[0]!.id;
    for (const state of ['en_route', 'arrived']) {
      const moved = await driver.post<One<Job>>('/api/driver/stop/state', { stop_id: stop, workflow_state_id: stopStates[state] });
      expect(moved.status).toBe(200);
      expect(moved.body.data.stops[0]!.workflow_state.key).toBe(state);
    }
    const completed = await driver.post<One<Job>>('/api/driver/stop/state', { stop_id: stop, workflow_state_id: stopStates.completed });
    expect(completed.body.data.stops[0]!.phase).toBe('completed');
    const last = job.stops[1]!.id;
    for (const state of ['en_route', 'arrived', 'completed']) await driver.post('/api/driver/stop/state', { stop_id: last, workflow_state_id: stopStates[state] });
    const done = await acme.as.dispatcher.get<One<Job>>(`/api/job/${job.id}`);
    expect(done.body.data.phase).toBe('completed');
  });

  it("answers 404 for another driver's job or stop, and changes nothing", async () => {
    const job = await driversJob();
    expect((await other.client.post<Failure>('/api/driver/job/cancel', { job_id: job.id, cancellation_notes: 'not mine' })).status).toBe(404);
    expect((await other.client.post('/api/driver/job/return', { job_id: job.id })).status).toBe(404);
    expect((await other.client.post('/api/driver/stop/state', { stop_id: job.stops[0]!.id, workflow_state_id: stopStates.en_route })).status).toBe(404);
    expect((await other.client.post<Page>('/api/driver/job/search', {})).body.data).toEqual([]);
    const unchanged = await acme.as.dispatcher.get<One<Job>>(`/api/job/${job.id}`);
    expect(unchanged.body.data).toMatchObject({ phase: 'assigned', version: 2, driver_user_id: acme.users.driver.id });
  });

  it('searches their jobs by workflow state and completion time, paged', async () => {
    const cancelled = await driver.post<Page>('/api/driver/job/search', { workflow_state_ids: [jobStates.cancelled], page: 1, page_size: 10 });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.length).toBeGreaterThan(0);
    expect(cancelled.body.data.every((j) => j.workflow_state_id === jobStates.cancelled && j.driver_user_id === acme.users.driver.id)).toBe(true);
    const completed = await driver.post<Page>('/api/driver/job/search', { completed_at_start: at(-3_600_000), completed_at_end: at(60_000) });
    expect(completed.body.data.map((j) => j.phase)).toEqual(['completed']);
    expect((await driver.post<Page>('/api/driver/job/search', { completed_at_end: at(-3_600_000) })).body.data).toEqual([]);
    const paged = await driver.post<Page>('/api/driver/job/search', { page: 1, page_size: 1 });
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.meta.pagination).toMatchObject({ pageSize: 1 });
    expect(paged.body.meta.pagination.totalItems).toBeGreaterThan(1);
  });
});

// After the search above, which counts the driver's completed jobs.
describe('driver moves answer what a later read shows', () => {
  it('answers each move with the job as a later read shows it: the driver\'s view, no internal notes', async () => {
    const job = await createJob(acme.as.dispatcher, { driver_user_id: acme.users.driver.id, internal_notes: 'staff only' });
    await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched });
    const read = async () => (await driver.get<One<Job>>(`/api/job/${job.id}`)).body.data;
    for (const stop of job.stops) {
      for (const state of ['en_route', 'arrived', 'completed']) {
        const moved = await driver.post<One<Job>>('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[state] });
        expect(moved.status).toBe(200);
        expect(moved.body.data).toEqual(await read());
      }
    }
    expect((await read()).phase).toBe('completed');
    expect(JSON.stringify(await read())).not.toContain('internal_notes');
    const cancelled = await driversJob();
    const answer = await driver.post<One<Job>>('/api/driver/job/cancel', { job_id: cancelled.id, cancellation_notes: 'flat tyre' });
    expect(answer.body.data).toEqual((await driver.get<One<Job>>(`/api/job/${cancelled.id}`)).body.data);
  });

  it('answers a return with the job as the office then reads it, less what only staff see', async () => {
    const job = await createJob(acme.as.dispatcher, { driver_user_id: acme.users.driver.id, internal_notes: 'staff only' });
    await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched });
    const returned = await driver.post<One<Job>>('/api/driver/job/return', { job_id: job.id });
    expect(returned.status).toBe(200);
    const { internal_notes: _notes, stops, ...office } = (await acme.as.dispatcher.get<One<Job & { internal_notes: string }>>(`/api/job/${job.id}`)).body.data;
    expect(_notes).toBe('staff only');
    expect(returned.body.data).toEqual({ ...office, stops: stops.map(({ internal_notes: _n, ...stop }: Record<string, unknown>) => stop) });
  });
});

describe('moves through /job/state by the driver', () => {
  it('answer the job as the move left it, even when the move takes it out of the driver’s view', async () => {
    const job = await driversJob();
    const returned = await driver.post<One<JobBody & { driver_user_id: string | null }>>('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.created });
    expect(returned.status).toBe(200);
    expect(returned.body.data).toMatchObject({ id: job.id, phase: 'unassigned', driver_user_id: null, version: 3 });
    expect((await driver.get(`/api/job/${job.id}`)).status).toBe(404);
  });
});

describe('the office outranks the driver', () => {
  it('a suspended worker cannot become available, but can go offline; reactivated, they can again', async () => {
    await acme.as.admin.post('/api/user', { email: 'suspended.driver@acme.example', password: 'suspended-pw', role: 'driver' });
    const worker = await session('suspended.driver@acme.example', 'suspended-pw');
    const me = await worker.get<One<{ user: { id: string } }>>('/api/auth/me');
    const id = me.body.data.user.id;
    expect((await acme.as.dispatcher.post('/api/worker', { user_id: id })).status).toBe(201);
    expect((await worker.put('/api/driver/status', { availability: 'available' })).status).toBe(200);
    expect((await acme.as.dispatcher.put('/api/worker', { id, operational_status: 'suspended' })).status).toBe(200);
    expect((await worker.put('/api/driver/status', { availability: 'offline' })).status).toBe(200);
    const refused = await worker.put('/api/driver/status', { availability: 'available' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'DRIVER_NOT_ACTIVE' });
    await acme.as.dispatcher.put('/api/worker', { id, operational_status: 'active' });
    expect((await worker.put('/api/driver/status', { availability: 'available' })).status).toBe(200);
  });

  it('a busy driver the office suspends can still go offline, audited like any change', async () => {
    await acme.as.admin.post('/api/user', { email: 'busy.suspended@acme.example', password: 'busy-suspended-pw', role: 'driver' });
    const worker = await session('busy.suspended@acme.example', 'busy-suspended-pw');
    const id = (await worker.get<One<{ user: { id: string } }>>('/api/auth/me')).body.data.user.id;
    expect((await acme.as.dispatcher.post('/api/worker', { user_id: id })).status).toBe(201);
    await worker.put('/api/driver/status', { availability: 'available' });
    expect((await worker.put<One<Status>>('/api/driver/status', { availability: 'busy' })).body.data.availability).toBe('busy');
    expect((await acme.as.dispatcher.put('/api/worker', { id, operational_status: 'suspended' })).status).toBe(200);
    expect((await worker.put<Failure>('/api/driver/status', { availability: 'available' })).body.code).toBe('DRIVER_NOT_ACTIVE');
    const offline = await worker.put<One<Status>>('/api/driver/status', { availability: 'offline' });
    expect([offline.status, offline.body.data?.availability]).toEqual([200, 'offline']);
    const audit = await acme.as.admin.get<{ data: { new_data: { availability: string; event: string } }[] }>(`/api/audit/search?entity_id=${id}&action=status_change`);
    expect(audit.body.data.map((r) => r.new_data.availability)).toContain('offline');
  });
});
