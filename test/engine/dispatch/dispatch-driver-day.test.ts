import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandScope } from '../../../engine/commands/apply-transition.ts';
import { dispatchToDriverDay } from '../../../engine/dispatch/dispatch-driver-day.ts';
import { planJobDispatch } from '../../../engine/dispatch/dispatch-plan.ts';
import { indexedDriverFacts } from '../../../engine/dispatch/driver-index.ts';
import { toJobTarget } from '../../../engine/dispatch/job-target.ts';
import type { CommandContext } from '../../../engine/engine.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useOneSite } from '../../support/one-site.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from '../../http/dispatch-fixtures.ts';

/**
 * The one-round-trip dispatch to a driver's day (`dispatchToDriverDay`) when it cannot write everything itself: it
 * writes nothing and hands the caller the place to write to (dispatch-write.test.ts covers what it writes).
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
let late: TestDriver;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  late = await createDriver(site.server, site.acme, { name: 'Late Lou', at: PARIS, vehicleId: await createVehicle(site.acme) });
}, 60_000);

describe('dispatch to a driver\'s day in one round trip', () => {
  it('writes nothing and hands back the driver\'s route when it is still unassigned (the two-statement path moves it)', async () => {
    const serviceDate = '2031-01-02';
    const routeId = await insertOpenRoute(late.id, serviceDate);
    const { outcome, state } = await driverDayOnly(serviceDate, (scope) => indexedDriverFacts(scope.em, scope.siteId, {}).then((i) => i.routeWorkflowId));
    expect(outcome).toEqual({ place: routeId });
    expect(state).toEqual(UNTOUCHED);
  });

  it('creates no route in a workflow that is no longer current: hands back a new route in the current one', async () => {
    // A copy of the current route workflow as an earlier version (what the current one was before an edit).
    const [current] = await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
      em.execute<{ id: string }[]>(
        `insert into workflow (id, site_id, entity_type, version, is_current, states, transitions, created_at)
         select 'wfl_01REPLACEDMEANWHILE00000000', site_id, entity_type, -1, false, states, transitions, now() from workflow
         where site_id = ? and entity_type = 'route' and is_current returning (select id from workflow where site_id = ? and entity_type = 'route' and is_current) as id`,
        [site.acme.site.id, site.acme.site.id],
      ),
    );
    const { outcome, state } = await driverDayOnly('2031-01-03', async () => 'wfl_01REPLACEDMEANWHILE00000000');
    expect(outcome).toEqual({ place: `new route in ${current!.id}` });
    expect(state).toEqual(UNTOUCHED);
  });
});

const UNTOUCHED = { job: [{ phase: 'unassigned', version: 1, route_id: null, driver_user_id: null }], dispatches: [], placed: [] };

/** `dispatchToDriverDay` alone for a new job and Lou's day `serviceDate`, with the route workflow `workflowOf` names; what it did and the job's state after. */
async function driverDayOnly(serviceDate: string, workflowOf: (scope: CommandScope) => Promise<string | null>) {
  const jobId = (await jobAt(site.acme.as.dispatcher, PARIS)).id;
  const ctx: CommandContext = { siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: null, role: 'dispatcher' } };
  const outcome = await site.server.services.engine.command(ctx, `job:${jobId}`, async (scope) => {
    const indexed = await indexedDriverFacts(scope.em, scope.siteId, { jobId });
    const plan = (await planJobDispatch(scope, toJobTarget(indexed.jobRows, jobId)))!;
    const day = { driverUserId: late.id, vehicleId: 'veh_none', serviceDate, teamId: null };
    const written = await dispatchToDriverDay(scope, plan, { day, driverUserId: late.id, routeWorkflowId: await workflowOf(scope), dispatch: { job_id: jobId, method: 'manual', status: 'processing' } });
    expect(scope.pending.events).toEqual([]);
    if (!('place' in written)) return { written: written.route.id };
    return { place: 'route' in written.place ? written.place.route.id : `new route in ${written.place.workflowId}` };
  });
  const state = await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, async (em) => ({
    job: await em.execute('select phase, version, route_id, driver_user_id from job where id = ?', [jobId]),
    dispatches: await em.execute('select id from dispatch where job_id = ?', [jobId]),
    placed: await em.execute('select stop_id from route_stop where job_id = ?', [jobId]),
  }));
  return { outcome, state };
}

/** An open route for the driver's day in the site's route workflow, still in its initial (unassigned) state, written directly. */
async function insertOpenRoute(driverId: string, serviceDate: string, id = `route_01OPEN${serviceDate.replaceAll('-', '')}000000000000`): Promise<string> {
  await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
    em.execute(
      `insert into route (id, site_id, name, workflow_id, workflow_state_id, phase, version, snapshot, driver_user_id, service_date, created_at, updated_at)
       select ?, w.site_id, 'Other', w.id, s->>'id', s->>'phase', 1, jsonb_build_object('value', s->>'key'), ?, ?, now(), now()
       from workflow w, jsonb_array_elements(w.states) s where w.site_id = ? and w.entity_type = 'route' and w.is_current and (s->>'is_initial')::boolean`,
      [id, driverId, serviceDate, site.acme.site.id],
    ),
  );
  return id;
}

