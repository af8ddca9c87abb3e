import * as fc from 'fast-check';
import { transition } from 'xstate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEntityMachine } from '../../machines/entity-machine.ts';
import { applyEvent, initialSnapshot } from '../../machines/entity-snapshot.ts';
import { validateWorkflow } from '../../machines/validate-workflow.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { ApiClient } from '../support/http-client.ts';
import { createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import { createJob, stateIds, type JobBody } from '../support/job-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { isDeclared, isFailure, walkArbitrary, workflowArbitrary, type Role } from '../support/workflow-arbitrary.ts';

const facts = { hasCancellationNotes: false, hasAttachment: false };

describe('generated machines (pure)', () => {
  it('accept exactly the declared moves for the allowed roles', () => {
    let version = 0;
    fc.assert(
      fc.property(workflowArbitrary, walkArbitrary, (workflow, walk) => {
        expect(validateWorkflow(workflow.states, workflow.transitions)).toEqual([]);
        version += 1;
        const machine = buildEntityMachine({ id: `wfl_pure_${version}`, entityType: 'job', version: 1, states: workflow.states.map((s) => ({ ...s, id: `wfs_${s.key}` })), transitions: workflow.transitions });
        let snapshot = initialSnapshot(machine);
        const observed: boolean[] = [];
        const expected: boolean[] = [];
        for (const [pick, role] of walk) {
          const target = workflow.states[pick % workflow.states.length]!;
          expected.push(isDeclared(workflow, String(snapshot.value), target.key, role));
          const next = applyEvent(machine, snapshot, { type: 'state.move', to: target.key, role, facts });
          observed.push(next !== null);
          snapshot = next ?? snapshot;
        }
        expect(observed).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('move exactly as XState itself would (state, status, and what `can` says), phase events included', () => {
    let version = 0;
    const phaseEvents = ['dispatch', 'accept', 'start', 'complete', 'fail', 'cancel', 'return'] as const;
    fc.assert(
      fc.property(workflowArbitrary, walkArbitrary, (workflow, walk) => {
        version += 1;
        const machine = buildEntityMachine({ id: `wfl_same_${version}`, entityType: 'job', version: 1, states: workflow.states.map((s) => ({ ...s, id: `wfs_${s.key}` })), transitions: workflow.transitions });
        let snapshot = initialSnapshot(machine);
        for (const [pick, role] of walk) {
          const target = workflow.states[pick % workflow.states.length]!;
          const event =
            pick % 3 === 0
              ? ({ type: `job.${phaseEvents[pick % phaseEvents.length]!}`, role, facts } as const)
              : ({ type: 'state.move', to: target.key, role, facts } as const);
          const ours = applyEvent(machine, snapshot, event);
          const allowed = snapshot.can(event);
          expect(ours !== null).toBe(allowed);
          if (!ours) continue;
          const [theirs] = transition(machine, snapshot, event);
          expect({ value: ours.value, status: ours.status }).toEqual({ value: theirs.value, status: theirs.status });
          snapshot = ours;
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('generated workflows through the API and the engine', () => {
  let server: TestServer;
  let acme: SiteFixture;
  /** The user the driver API key acts as (its service account), so that key sees the job assigned to it. */
  let driverId: string;
  /** Clients per role; the customer is a signed-in customer user (service accounts cannot be customers). */
  let as: Record<Role, ApiClient>;

  beforeAll(async () => {
    server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
    acme = await createSiteFixture(server, 'acme');
    driverId = (await acme.as.driver.get<{ data: { user: { id: string } } }>('/api/auth/me')).body.data.user.id;
    const session = await signIn(server.client('acme'), acme.users.customer.email, acme.users.customer.password);
    as = { ...acme.as, customer: server.client('acme').as({ accessToken: session.access_token }) };
  });
  afterAll(() => server.close());

  async function writes(): Promise<number> {
    const rows: { n: number }[] = await inTenantScope(server.services.db.orm, { siteId: acme.site.id }, (em) =>
      em.execute('select (select count(*) from audit_record) + (select count(*) from outbox) as n'),
    );
    return Number(rows[0]!.n);
  }

  it('accept every declared move for the right role and refuse every other with 409, writing nothing', async () => {
    await fc.assert(
      fc.asyncProperty(workflowArbitrary, walkArbitrary, async (workflow, walk) => {
        const put = await acme.as.admin.put('/api/workflow', { entity_type: 'job', ...workflow });
        expect(put.status).toBe(200);
        const ids = await stateIds(acme.as.admin, 'job');
        const job = await createJob(acme.as.dispatcher, { customer_email: undefined, customer_user_id: acme.users.customer.id, driver_user_id: driverId });
        let current = workflow.states[0]!;
        let version = job.version;
        let driverSees = true;
        const observed: string[] = [];
        const expected: string[] = [];
        for (const [pick, role] of walk) {
          const target = workflow.states[pick % workflow.states.length]!;
          const before = await writes();
          const response = await as[role].post<{ data: JobBody }>('/api/job/state', { job_id: job.id, workflow_state_id: ids[target.key] });
          const declared = isDeclared(workflow, current.key, target.key, role);
          const hidden = role === 'driver' && !driverSees;
          // The job's stops never end on this walk: a declared completion is refused for them, while a declared
          // failure is made (and cancels them).
          const stopsOpen = declared && target.phase === 'completed' && !isFailure(workflow, current.key, target.key);
          const ended = declared && target.phase === 'completed' && !stopsOpen ? ', stops cancelled' : '';
          const outcome = stopsOpen ? '409 JOB_HAS_OPEN_STOPS, nothing written' : declared ? `200 ${target.key} v${version + 1}${ended}` : '409 INVALID_TRANSITION, nothing written';
          expected.push(hidden ? '404' : outcome);
          if (response.status === 200) {
            const key = workflow.states.find((s) => ids[s.key] === response.body.data.workflow_state_id)?.key;
            const stops = response.body.data.stops.map((stop) => stop.phase);
            const cancelled = response.body.data.phase === 'completed' && stops.every((phase) => phase === 'cancelled') ? ', stops cancelled' : '';
            observed.push(`200 ${key} v${response.body.data.version}${cancelled}`);
          } else if (response.status === 409) {
            const unchanged = (await writes()) === before;
            observed.push(`409 ${String((response.body as unknown as { code?: string }).code)}${unchanged ? ', nothing written' : ', WROTE'}`);
          } else {
            observed.push(String(response.status));
          }
          if (!hidden && declared && !stopsOpen) {
            if (target.phase === 'unassigned' && current.phase !== 'unassigned') driverSees = false;
            current = target;
            version += 1;
          }
        }
        expect(observed).toEqual(expected);
      }),
      { numRuns: 12 },
    );
  }, 120_000);
});
