import { beforeAll, describe, expect, it } from 'vitest';
import { assignJob, type Assigned } from '../../../engine/dispatch/assign-job.ts';
import { indexedDriverFacts } from '../../../engine/dispatch/driver-index.ts';
import { toJobTarget } from '../../../engine/dispatch/job-target.ts';
import { jobFromRow, type EntityRow } from '../../../engine/jobs/job-view.ts';
import { routeFromRow } from '../../../engine/routes/route-view.ts';
import type { CommandContext } from '../../../engine/engine.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useOneSite } from '../../support/one-site.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from '../../http/dispatch-fixtures.ts';

/**
 * A dispatch planned from the route this process remembers for the driver's day (`dispatchPlanned`): what it says it
 * wrote is what the database holds, and a memory gone stale (another process's write) is caught by the statement's
 * own check (`dispatch_plan_holds`, migration 0023) and the command runs again on reads, writing nothing wrong.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
let vehicle: string;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  vehicle = await createVehicle(site.acme);
}, 60_000);

const driver = (name: string): Promise<TestDriver> => createDriver(site.server, site.acme, { name, at: PARIS, vehicleId: vehicle });
const inSite = <T>(work: (em: Parameters<Parameters<typeof inTenantScope>[2]>[0]) => Promise<T>) => inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, work);

/** A new job assigned to `to` through the engine's command path; the answer and how many times the command ran. */
async function assign(to: TestDriver): Promise<{ assigned: Assigned; runs: number; jobId: string }> {
  const jobId = (await jobAt(site.acme.as.dispatcher, PARIS)).id;
  const ctx: CommandContext = { siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: null, role: 'dispatcher' } };
  let runs = 0;
  const assigned = await site.server.services.engine.command(ctx, `job:${jobId}`, async (scope) => {
    runs += 1;
    const indexed = await indexedDriverFacts(scope.em, scope.siteId, { jobId });
    const facts = indexed.drivers.find((d) => d.userId === to.id)!;
    const job = toJobTarget(indexed.jobRows, jobId);
    return assignJob(scope, { jobId, driverId: to.id, method: 'manual', requireConfirmation: false, loaded: { job, driver: facts, timezone: indexed.timezone, routeWorkflowId: indexed.routeWorkflowId } });
  });
  return { assigned, runs, jobId };
}

const holds = (args: unknown[]) => inSite((em) => em.execute<{ holds: boolean }[]>('select dispatch_plan_holds(?, ?::int, ?, ?::int, ?, ?::int, ?::int) as holds', args));
const routesOf = (to: TestDriver) => inSite((em) => em.execute<EntityRow[]>('select * from route where driver_user_id = ? order by created_at', [to.id]));

describe('a dispatch planned from the remembered route', () => {
  it('answers the rows the database holds, opening the route and joining it', async () => {
    const ann = await driver('Ann Ahead');
    for (const round of ['opens', 'joins']) {
      const { assigned, runs, jobId } = await assign(ann);
      expect(runs, round).toBe(1);
      const [dispatch] = await inSite((em) => em.execute<EntityRow[]>('select * from dispatch where id = ?', [assigned.dispatch.id]));
      // Timestamps come back as text from this read: as dates, as the command path reads them.
      const times = ['driver_accepted_at', 'dispatch_at', 'dispatched_at', 'completed_at', 'posted_at', 'created_at', 'updated_at'];
      expect(assigned.dispatch, round).toEqual(Object.fromEntries(Object.entries(dispatch!).map(([k, v]) => [k, times.includes(k) && v !== null ? new Date(String(v)) : v])));
      // The decision's keys in the order `jsonb` keeps them, as a row read back gives them.
      expect(JSON.stringify(assigned.dispatch.decision), round).toBe(JSON.stringify(dispatch!.decision));
      const [route] = await routesOf(ann);
      expect(assigned.route, round).toEqual(routeFromRow(route!));
      const [job] = await inSite((em) => em.execute<EntityRow[]>('select * from job where id = ?', [jobId]));
      expect(jobFromRow(job!)).toMatchObject({ routeId: assigned.route.id, driverUserId: ann.id, phase: 'assigned' });
    }
    expect((await routesOf(ann)).map((r) => r.version)).toEqual([3]);
  });

  it('runs again on reads when another process moved the remembered route: joins it as it is now', async () => {
    const bob = await driver('Bob Behind');
    const first = await assign(bob);
    // Another process renames the route (a new version this process has not seen).
    await inSite((em) => em.execute("update route set name = 'Renamed elsewhere', version = version + 1 where id = ?", [first.assigned.route.id]));
    const second = await assign(bob);
    expect(second.runs).toBe(2);
    expect(second.assigned.route).toMatchObject({ id: first.assigned.route.id, name: 'Renamed elsewhere', version: 4 });
    const routes = await routesOf(bob);
    expect(routes.map((r) => [r.id, r.version])).toEqual([[first.assigned.route.id, 4]]);
    // Remembered again: the next one is planned and holds.
    expect((await assign(bob)).runs).toBe(1);
  });

  it('runs again on reads when another process opened the driver\'s route for the day: joins it, opens no second one', async () => {
    const cy = await driver('Cy Cold');
    const serviceDate = new Intl.DateTimeFormat('en-CA', { timeZone: site.acme.site.timezone ?? 'UTC' }).format(new Date());
    const other = 'route_01OPENEDBYANOTHERPROCESS0';
    await inSite((em) =>
      em.execute(
        `insert into route (id, site_id, name, workflow_id, workflow_state_id, phase, version, snapshot, driver_user_id, service_date, created_at, updated_at)
         select ?, w.site_id, 'Other', w.id, s->>'id', s->>'phase', 1, jsonb_build_object('value', s->>'key'), ?, ?, now(), now()
         from workflow w, jsonb_array_elements(w.states) s where w.site_id = ? and w.entity_type = 'route' and w.is_current and (s->>'is_initial')::boolean`,
        [other, cy.id, serviceDate, site.acme.site.id],
      ),
    );
    const { assigned, runs, jobId } = await assign(cy);
    expect(runs).toBe(2);
    expect(assigned.route.id).toBe(other);
    expect((await routesOf(cy)).map((r) => r.id)).toEqual([other]);
    const [job] = await inSite((em) => em.execute<EntityRow[]>('select route_id, version from job where id = ?', [jobId]));
    expect(job).toEqual({ route_id: other, version: 3 });
  });
});

describe('dispatch_plan_holds', () => {
  it('is true when the write is the one planned, and raises DP001 (nothing of the transaction stays) when not', async () => {
    expect(await holds(['rte_a', 2, 'rte_a', 2, true, 1, 1])).toEqual([{ holds: true }]);
    expect(await holds(['rte_new', null, 'rte_new', null, true, 0, 0])).toEqual([{ holds: true }]);
    for (const stale of [['rte_a', 2, 'rte_a', 3, true, 1, 1], ['rte_new', null, null, null, true, 0, 0], ['rte_a', 2, 'rte_a', 2, false, 1, 1], ['rte_a', 2, 'rte_a', 2, true, 2, 1]]) {
      await expect(holds(stale)).rejects.toMatchObject({ code: 'DP001' });
    }
  });
});
