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
