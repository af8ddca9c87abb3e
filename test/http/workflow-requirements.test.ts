import { beforeAll, describe, expect, it } from 'vitest';
import { sessionClient } from '../support/fixtures.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

// What a workflow's transition table asks of a move (`roles`, `requires`) and what is kept of it, as the API shows it.

type One<T = Record<string, unknown>> = { data: T };
type Failure = { code: string; error: string; details?: Record<string, unknown>; fields?: { field: string }[] };
type Workflow = { states: Record<string, unknown>[]; transitions: Record<string, unknown>[] };

const site = useOneSite();
let customer: ApiClient;
let driver: ApiClient;

beforeAll(async () => {
  customer = await sessionClient(site.server, 'acme', site.acme.users.customer);
  driver = await sessionClient(site.server, 'acme', site.acme.users.driver);
});

/** Adds states and moves to the site's current workflow of that kind (a new version, for entities created after it). */
async function extendWorkflow(entityType: 'job' | 'stop', states: Record<string, unknown>[], transitions: Record<string, unknown>[]): Promise<void> {
  const current = await site.acme.as.admin.get<One<Workflow>>(`/api/workflow?entity_type=${entityType}`);
  const body = { entity_type: entityType, states: [...current.body.data.states, ...states], transitions: [...current.body.data.transitions, ...transitions] };
  const put = await site.acme.as.admin.put('/api/workflow', body);
  if (put.status !== 200) throw new Error(`workflow update failed: ${put.status} ${put.text}`);
}

describe('who may make a move', () => {
  it('a move whose roles an admin left out is staff only: refused for the customer and the driver, made by a dispatcher', async () => {
    await extendWorkflow('job', [{ key: 'on_hold', name: 'On hold', phase: 'unassigned', is_initial: false, is_terminal: false }], [
      { from: 'created', to: 'on_hold' },
      { from: 'on_hold', to: 'created' },
    ]);
    const onHold = (await stateIds(site.acme.as.admin, 'job')).on_hold;
    const job = await createJob(site.acme.as.dispatcher, { customer_email: undefined, customer_user_id: site.acme.users.customer.id, driver_user_id: site.acme.users.driver.id });
    for (const client of [customer, driver]) {
      const refused = await client.post<Failure>('/api/job/state', { job_id: job.id, workflow_state_id: onHold });
      expect([refused.status, refused.body.code]).toEqual([409, 'INVALID_TRANSITION']);
    }
    const moved = await site.acme.as.dispatcher.post<One<{ workflow_state_id: string }>>('/api/job/state', { job_id: job.id, workflow_state_id: onHold });
    expect([moved.status, moved.body.data.workflow_state_id]).toEqual([200, onHold]);
  });
});

type Stop = { id: string; phase: string; cancellation_notes: string | null; workflow_state: { key: string } };
type AuditRecord = { action: string; new_data: Record<string, unknown> | null; changes: Record<string, { from: unknown; to: unknown }> };

/** A stop workflow whose failure from arrived requires a reason; the job is created for, and dispatched to, the driver. */
async function failNeedsReason(): Promise<{ stops: { id: string }[]; stopStates: Record<string, string> }> {
  const current = await site.acme.as.admin.get<One<Workflow>>('/api/workflow?entity_type=stop');
  const transitions = current.body.data.transitions.map((t) => (t.from === 'arrived' && t.to === 'failed' ? { ...t, requires: ['cancellation_notes'] } : t));
  expect((await site.acme.as.admin.put('/api/workflow', { entity_type: 'stop', states: current.body.data.states, transitions })).status).toBe(200);
  const job = await createJob(site.acme.as.dispatcher, { driver_user_id: site.acme.users.driver.id });
  const jobStates = await stateIds(site.acme.as.admin, 'job');
  expect((await site.acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
  return { stops: job.stops, stopStates: await stateIds(site.acme.as.admin, 'stop') };
}

async function driveTo(stopId: string, states: string[], stopStates: Record<string, string>): Promise<void> {
  for (const state of states) {
    const moved = await driver.post('/api/driver/stop/state', { stop_id: stopId, workflow_state_id: stopStates[state] });
    if (moved.status !== 200) throw new Error(`stop move to ${state} failed: ${moved.status} ${moved.text}`);
  }
}

const stopOf = async (id: string) => (await site.acme.as.dispatcher.get<One<Stop>>(`/api/stop?id=${id}`)).body.data;
const movesOf = async (id: string) =>
  (await site.acme.as.admin.get<{ data: AuditRecord[] }>(`/api/audit/search?entity_type=Stop&entity_id=${id}`)).body.data.filter((r) => r.action === 'state_change');

describe('the reason given with a move', () => {
  it('a reason a failure requires is kept on the stop and in the audit record of the move', async () => {
    const { stops, stopStates } = await failNeedsReason();
    const pickup = stops[0]!.id;
    await driveTo(pickup, ['en_route', 'arrived'], stopStates);
    const failed = await driver.post('/api/driver/stop/state', { stop_id: pickup, workflow_state_id: stopStates.failed, cancellation_notes: 'customer not home' });
    expect(failed.status, failed.text).toBe(200);
    expect(await stopOf(pickup)).toMatchObject({ workflow_state: { key: 'failed' }, cancellation_notes: 'customer not home' });
    const failure = (await movesOf(pickup)).find((r) => r.new_data?.state === 'failed');
    expect(failure?.new_data?.reason).toBe('customer not home');
    expect(failure?.changes.reason).toEqual({ from: null, to: 'customer not home' });
  });

  it('a note given with a completion is kept in the audit record of the move, not as the stop cancellation notes', async () => {
    const { stops, stopStates } = await failNeedsReason();
    const pickup = stops[0]!.id;
    await driveTo(pickup, ['en_route', 'arrived'], stopStates);
    const done = await driver.post('/api/driver/stop/state', { stop_id: pickup, workflow_state_id: stopStates.completed, cancellation_notes: 'left with the concierge' });
    expect(done.status, done.text).toBe(200);
    expect((await stopOf(pickup)).cancellation_notes).toBeNull();
    expect((await movesOf(pickup)).find((r) => r.new_data?.state === 'completed')?.new_data?.reason).toBe('left with the concierge');
  });
});

describe('a move refused for a missing requirement', () => {
  it('is 422 REQUIREMENT_NOT_MET naming cancellation_notes, not an INVALID_TRANSITION listing the move as allowed, and writes nothing', async () => {
    const { stops, stopStates } = await failNeedsReason();
    const pickup = stops[0]!.id;
    await driveTo(pickup, ['en_route', 'arrived'], stopStates);
    const before = await stopOf(pickup);
    const movesBefore = (await movesOf(pickup)).length;
    for (const notes of [{}, { cancellation_notes: '   ' }]) {
      const refused = await driver.post<Failure>('/api/driver/stop/state', { stop_id: pickup, workflow_state_id: stopStates.failed, ...notes });
      expect([refused.status, refused.body.code, refused.body.fields?.[0]?.field]).toEqual([422, 'REQUIREMENT_NOT_MET', 'cancellation_notes']);
      expect(refused.body.error).toContain('moving from arrived to failed needs cancellation_notes');
      expect(refused.body.details).toMatchObject({ current_state: { key: 'arrived' }, missing: ['cancellation_notes'] });
    }
    expect(await stopOf(pickup)).toEqual(before);
    expect(await movesOf(pickup)).toHaveLength(movesBefore);
    // A move the workflow does not have for the role is still 409 INVALID_TRANSITION.
    const undeclared = await driver.post<Failure>('/api/driver/stop/state', { stop_id: pickup, workflow_state_id: stopStates.pending });
    expect([undeclared.status, undeclared.body.code]).toEqual([409, 'INVALID_TRANSITION']);
  });
});
