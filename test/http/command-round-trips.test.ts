import { beforeAll, describe, expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';
import { names, recording, transactionWith, type Sent } from '../support/pg-recording.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from './dispatch-fixtures.ts';

// Writes whose results nobody reads go out with the command's COMMIT instead of in round trips of their own: a
// new job's insert, an accepted job's move, and the job moves a stop move cascades to (built from the row the move
// read, their versions checked at the COMMIT); a status change reads what it checks in one statement. These tests
// count the round trips of each and check the outcome.

type One<T> = { data: T };
type Job = { id: string; phase: string; version: number; workflow_state: { key: string }; stops: { id: string }[] };

const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
const PARIS = { lat: 48.8566, lng: 2.3522 };
let driver: TestDriver;
let stopStates: Record<string, string>;

beforeAll(async () => {
  driver = await createDriver(site.server, site.acme, { name: 'Trip Tam', at: PARIS, vehicleId: await createVehicle(site.acme) });
  stopStates = await stateIds(site.acme.as.admin, 'stop');
}, 60_000);

/** No statement before the COMMIT's names the entity: its write went out with the COMMIT. */
const onlyInCommit = (transaction: string[], id: string) => transaction.slice(0, -1).every((text) => !names(text, id));

const readJob = async (id: string) => (await site.acme.as.admin.get<One<Job>>(`/api/job/${id}`)).body.data;
/** The job as its driver reads it (no internal notes): what a stop move answers. */
const driverReads = async (id: string) => (await driver.client.get<One<Job>>(`/api/job/${id}`)).body.data;

/** A job dispatched to the driver, its assignment sent with `require_confirmation`: the dispatch's id. */
async function awaitingConfirmation(): Promise<{ job: Job; dispatchId: string }> {
  const job = (await jobAt(site.acme.as.dispatcher, PARIS)) as Job;
  const sent = await site.acme.as.dispatcher.post<One<{ dispatch: { id: string } }>>('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id, require_confirmation: true });
  expect(sent.status).toBe(200);
  return { job, dispatchId: sent.body.data.dispatch.id };
}

describe('round trips of the drivers\' and office\'s commands', () => {
  it('POST /job sends its insert with the COMMIT: two round trips for a known customer', async () => {
    for (let round = 0; round < 3; round++) {
      let created: Job | undefined;
      const sent = await recording(async () => {
        created = await createJob(site.acme.as.dispatcher) as Job;
      });
      // The first creation of the session sends its statements inlined and prepares them; the next ones are counted.
      if (round === 0) continue;
      const transaction = transactionWith(sent, created!.id);
      expect(transaction).toHaveLength(2);
      expect(onlyInCommit(transaction, created!.id)).toBe(true);
      expect(await readJob(created!.id)).toEqual(created);
    }
  });

  it('POST /dispatch/accept reads the job with its dispatch update and sends the job\'s move with the COMMIT: two round trips', async () => {
    for (let round = 0; round < 3; round++) {
      const { job, dispatchId } = await awaitingConfirmation();
      const before = await readJob(job.id);
      let status = 0;
      const sent = await recording(async () => {
        status = (await driver.client.post('/api/dispatch/accept', { dispatch_id: dispatchId })).status;
      });
      expect(status).toBe(200);
      if (round === 0) continue;
      const transaction = transactionWith(sent, dispatchId);
      expect(transaction).toHaveLength(2);
      expect(onlyInCommit(transaction, job.id)).toBe(true);
      const accepted = await readJob(job.id);
      expect(accepted.workflow_state.key).toBe('accepted');
      expect(accepted.version).toBe(before.version + 1);
    }
  });

  it("PUT /driver/status reads the driver's state and worker record in one statement: three round trips", async () => {
    for (const availability of ['on_break', 'available', 'on_break', 'available'] as const) {
      let status = 0;
      const sent = await recording(async () => {
        status = (await driver.client.put('/api/driver/status', { availability })).status;
      });
      expect(status).toBe(200);
      const transaction = transactionWith(sent, driver.id);
      // The state and worker read (with the BEGIN), the versioned update, the audit and outbox with the COMMIT.
      expect(transaction).toHaveLength(3);
      // The read inlined (its first time on this connection: the text spans lines) or as its prepared statement.
      expect(transaction[0]).toMatch(/^begin; [^]*(select ds\.\*, \(select operational_status from worker w|execute engine_stmt_\d+\('site_[^']*', 'usr_[^']*', 'site_[^']*', 'usr_[^']*'\)$)/);
    }
    expect((await driver.client.get<One<{ availability: string }>>('/api/driver/location')).body.data.availability).toBe('available');
  });

  it('a stop move that starts its job sends the job\'s move with the COMMIT: two round trips', async () => {
    for (let round = 0; round < 3; round++) {
      const { job, dispatchId } = await awaitingConfirmation();
      await driver.client.post('/api/dispatch/accept', { dispatch_id: dispatchId });
      const before = await readJob(job.id);
      let answer: Job | undefined;
      const sent = await recording(async () => {
        answer = (await driver.client.post<One<Job>>('/api/driver/stop/state', { stop_id: job.stops[0]!.id, workflow_state_id: stopStates.en_route })).body.data;
      });
      if (round === 0) continue;
      const transaction = transactionWith(sent, job.id);
      expect(transaction).toHaveLength(2);
      // The first round trip reads the stop's rows (named by the stop); the job's write goes with the COMMIT.
      expect(onlyInCommit(transaction, job.id)).toBe(true);
      expect(answer).toEqual(await driverReads(job.id));
      expect(answer).toMatchObject({ phase: 'in_progress', version: before.version + 1 });
    }
  });

  it("a stop move that leaves its job's other stop open, or its route's other job, checks that with the COMMIT: two round trips", async () => {
    const first = await awaitingConfirmation();
    const second = await awaitingConfirmation();
    for (const { dispatchId } of [first, second]) await driver.client.post('/api/dispatch/accept', { dispatch_id: dispatchId });
    const move = (stopId: string, state: string) => driver.client.post<One<Job>>('/api/driver/stop/state', { stop_id: stopId, workflow_state_id: stopStates[state] });
    const [pickup, dropoff] = first.job.stops as [{ id: string }, { id: string }];
    for (const state of ['en_route', 'arrived']) await move(pickup.id, state);
    let sent = await recording(async () => void expect((await move(pickup.id, 'completed')).status).toBe(200));
    let transaction = transactionWith(sent, first.job.id);
    expect(transaction).toHaveLength(2);
    expect(transaction[1]).toMatch(/job_stops_left_open\('job_[^']*', 'site_[^']*'\)|execute engine_stmt_\d+\('job_[^']*', 'site_[^']*'\)/);
    for (const state of ['en_route', 'arrived']) await move(dropoff.id, state);
    let answer: Job | undefined;
    sent = await recording(async () => {
      answer = (await move(dropoff.id, 'completed')).body.data;
    });
    transaction = transactionWith(sent, first.job.id);
    expect(transaction).toHaveLength(2);
    expect(transaction[1]).toMatch(/route_jobs_left_open\('rte_[^']*', 'site_[^']*'\)|execute engine_stmt_\d+\('rte_[^']*', 'site_[^']*'\)/);
    expect(answer).toMatchObject({ phase: 'completed' });
    expect(answer).toEqual(await driverReads(first.job.id));
  });

  it("a job's other stop ended by another transaction after the stop move read it: the COMMIT's check makes the move run again, and the job completes", async () => {
    const { job, dispatchId } = await awaitingConfirmation();
    await driver.client.post('/api/dispatch/accept', { dispatch_id: dispatchId });
    const [pickup, dropoff] = job.stops as [{ id: string }, { id: string }];
    for (const [stopId, state] of [[pickup.id, 'en_route'], [pickup.id, 'arrived'], [dropoff.id, 'en_route'], [dropoff.id, 'arrived']] as const) {
      expect((await driver.client.post('/api/driver/stop/state', { stop_id: stopId, workflow_state_id: stopStates[state] })).status).toBe(200);
    }
    let ended = false;
    // Once the pickup's move has read the job's stops (the dropoff still open), the dropoff ends elsewhere and commits.
    const anotherEnd = async (query: Sent) => {
      if (ended || !query.text.startsWith('begin') || !names(query.text, pickup.id)) return;
      ended = true;
      await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
        em.execute("update stop set phase = 'completed', workflow_state_id = ?, version = version + 1 where id = ?", [stopStates.completed, dropoff.id]),
      );
    };
    let answer: { status: number; body: One<Job> } | undefined;
    const sent = await recording(async () => {
      answer = await driver.client.post<One<Job>>('/api/driver/stop/state', { stop_id: pickup.id, workflow_state_id: stopStates.completed });
    }, anotherEnd);
    expect(ended).toBe(true);
    expect(answer!.status).toBe(200);
    // Read twice: the first COMMIT's check raised, and the command ran again on reads that see both stops ended.
    expect(sent.filter((s) => s.text.startsWith('begin') && names(s.text, pickup.id))).toHaveLength(2);
    expect(answer!.body.data).toMatchObject({ phase: 'completed' });
    expect(answer!.body.data).toEqual(await driverReads(job.id));
  });

  it('a job moved by another transaction after the stop move read it makes the move run again on new reads', async () => {
    const { job, dispatchId } = await awaitingConfirmation();
    await driver.client.post('/api/dispatch/accept', { dispatch_id: dispatchId });
    const before = await readJob(job.id);
    const stopId = job.stops[0]!.id;
    let moved = false;
    // Once the move's first statement (its BEGIN and its reads) is answered, another transaction writes the job (a
    // new version, as any move of it makes) and commits.
    const anotherWrite = async (query: Sent) => {
      if (moved || !query.text.startsWith('begin') || !names(query.text, stopId)) return;
      moved = true;
      await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) => em.execute('update job set version = version + 1 where id = ?', [job.id]));
    };
    let answer: { status: number; body: One<Job> } | undefined;
    const sent = await recording(async () => {
      answer = await driver.client.post<One<Job>>('/api/driver/stop/state', { stop_id: stopId, workflow_state_id: stopStates.en_route });
    }, anotherWrite);
    expect(moved).toBe(true);
    expect(answer!.status).toBe(200);
    // Read twice: the first COMMIT's check raised, and the command ran again.
    expect(sent.filter((s) => s.text.startsWith('begin') && names(s.text, stopId))).toHaveLength(2);
    const after = await driverReads(job.id);
    expect(answer!.body.data).toEqual(after);
    expect(after).toMatchObject({ phase: 'in_progress', version: before.version + 2 });
  });
});
