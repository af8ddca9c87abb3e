import { Client } from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../support/wait-for.ts';
import { OptimisticLockError } from '@mikro-orm/core';
import { assignJob } from '../../../engine/dispatch/assign-job.ts';
import { planJobDispatch } from '../../../engine/dispatch/dispatch-plan.ts';
import { dispatchInsert } from '../../../engine/dispatch/dispatch-record.ts';
import { writeDispatchAtOnce } from '../../../engine/dispatch/dispatch-write.ts';
import { lockDriverDayPlace } from '../../../engine/dispatch/driver-day-route.ts';
import { indexedDriverFacts } from '../../../engine/dispatch/driver-index.ts';
import { toJobTarget } from '../../../engine/dispatch/job-target.ts';
import type { CommandScope } from '../../../engine/commands/apply-transition.ts';
import type { CommandContext } from '../../../engine/engine.ts';
import { workflowById } from '../../../engine/workflow/workflow.service.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useOneSite } from '../../support/one-site.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from '../../http/dispatch-fixtures.ts';
import { driverDayLockKey } from '../../../engine/routes/driver-day-lock.ts';

/**
 * The one-statement dispatch write (`dispatchToDriverDay`, `writeDispatchAtOnce`) and the same write planned from the
 * route this process remembers (`dispatchPlanned`, sent with the command's next statement) against the step-by-step
 * path they replace: the same rows, versions, audit records and events, in the same order, for a job that opens the
 * driver's route and for one that joins it; one driver's jobs go each way (the step-by-step one: a job target
 * without its workflow states; the one-statement one: a command that cannot send a statement later).
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
let fast: TestDriver;
let single: TestDriver;
let stepwise: TestDriver;
let late: TestDriver;
let busy: TestDriver;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  const vehicle = await createVehicle(site.acme);
  // One name: the records name the driver.
  fast = await createDriver(site.server, site.acme, { name: 'Sam Same', at: PARIS, vehicleId: vehicle });
  single = await createDriver(site.server, site.acme, { name: 'Sam Same', at: PARIS, vehicleId: vehicle });
  stepwise = await createDriver(site.server, site.acme, { name: 'Sam Same', at: PARIS, vehicleId: vehicle });
  late = await createDriver(site.server, site.acme, { name: 'Late Lou', at: PARIS, vehicleId: vehicle });
  busy = await createDriver(site.server, site.acme, { name: 'Busy Bo', at: PARIS, vehicleId: vehicle });
}, 60_000);

type Outcome = { statements: number; pending: unknown; rows: unknown };
type Way = 'planned' | 'one statement' | 'stepwise';

/**
 * Dispatches a new two-stop job to `driver`, planned from memory, in one statement or step by step; what it wrote
 * and recorded, and the round trips the assignment made (over every attempt of the command).
 */
async function dispatchTo(driver: TestDriver, way: Way): Promise<Outcome> {
  const jobId = (await jobAt(site.acme.as.dispatcher, PARIS)).id;
  const ctx: CommandContext = { siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: null, role: 'dispatcher' } };
  let statements = 0;
  let pending: unknown;
  const assigned = await site.server.services.engine.command(ctx, `job:${jobId}`, async (commandScope) => {
    const scope = way === 'one statement' ? { ...commandScope, planAhead: undefined } : commandScope;
    const indexed = await indexedDriverFacts(scope.em, scope.siteId, { jobId });
    const target = toJobTarget(indexed.jobRows, jobId);
    const job = way === 'stepwise' ? { ...target, states: undefined } : target;
    const facts = indexed.drivers.find((d) => d.userId === driver.id)!;
    await workflowById(scope.em, indexed.routeWorkflowId!); // cached from here on: the count is the dispatch's own statements
    const result = await countingRoundTrips(scope, (n) => (statements += n), () =>
      assignJob(scope, { jobId, driverId: driver.id, method: 'manual', requireConfirmation: false, loaded: { job, driver: facts, timezone: indexed.timezone, routeWorkflowId: indexed.routeWorkflowId } }),
    );
    pending = structuredClone(scope.pending);
    return result;
  });
  const ids = new Map<string, string>([[jobId, 'JOB'], [assigned.route.id, 'ROUTE'], [assigned.dispatch.id, 'DISPATCH'], [driver.id, 'DRIVER']]);
  const rows = await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, async (em) => ({
    job: await em.execute('select phase, workflow_state_id, snapshot, version, driver_user_id from job where id = ?', [jobId]),
    stops: await em.execute('select id, phase, workflow_state_id, snapshot, version from stop where job_id = ? order by sort_order', [jobId]),
    route: await em.execute('select phase, workflow_state_id, snapshot, version, driver_user_id from route where id = ?', [assigned.route.id]),
    routeStops: await em.execute('select job_id, position from route_stop where job_id = ? order by position', [jobId]),
  }));
  const stopIds = (rows.stops as { id: string }[]).map((s) => s.id);
  stopIds.forEach((id, i) => ids.set(id, `STOP${i}`));
  return { statements, pending: normalized(pending, ids), rows: normalized(rows, ids) };
}

/**
 * Runs `work`, counting the round trips it makes on the command's connection (a statement prepared on the connection
 * for later use is not one of the dispatch's own: it is sent once per connection).
 */
async function countingRoundTrips<T>(scope: CommandScope, report: (count: number) => void, work: () => Promise<T>): Promise<T> {
  const context = scope.em.getTransactionContext<{ client: { acquireConnection(): Promise<object> } }>()!;
  const connection = await context.client.acquireConnection();
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  let count = 0;
  prototype.query = function (this: object, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
    if (this === connection && !/^\s*prepare /i.test(text)) count += 1;
    return original.apply(this, args);
  };
  try {
    return await work();
  } finally {
    prototype.query = original;
    report(count);
  }
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;
const GENERATED_ID = /^[a-z]+_[0-9A-Z]{26}$/;

/** Known ids replaced by their role, other generated ids and times by placeholders. */
function normalized(value: unknown, ids: Map<string, string>, key = ''): unknown {
  if (typeof value === 'string') return ids.get(value) ?? (ISO_TIME.test(value) ? 'TIME' : GENERATED_ID.test(value) || key === 'id' ? 'ID' : value);
  if (value instanceof Date) return 'TIME';
  if (Array.isArray(value)) return value.map((v) => normalized(v, ids));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalized(v, ids, k)]));
  return value;
}

describe('dispatch write in one statement', () => {
  it('writes and records what the step-by-step path does, opening the route and joining it, in fewer statements', async () => {
    for (const round of ['opens the route', 'joins the route']) {
      const planned = await dispatchTo(fast, 'planned');
      const one = await dispatchTo(single, 'one statement');
      const other = await dispatchTo(stepwise, 'stepwise');
      expect(planned.rows, round).toEqual(other.rows);
      expect(planned.pending, round).toEqual(other.pending);
      expect(one.rows, round).toEqual(other.rows);
      expect(one.pending, round).toEqual(other.pending);
      // Planned: the driver-day lock and the write wait for the command's next statement (here its COMMIT).
      expect(planned.statements, round).toBe(0);
      // Opening or joining: the driver-day lock and the write in one round trip.
      expect(one.statements, round).toBe(1);
      expect(one.statements, round).toBeLessThan(other.statements);
    }
  });

  it('places a job after the stops the driver-day lock holder added while it waited, in no round trip of its own', async () => {
    const { route, otherJob } = await routeWithAnotherJob(busy);
    const positions = await whileAnotherCommandAddsStops(route, otherJob, 'driver-day lock');
    // Planned from the route remembered for the day: the lock and the write went with the COMMIT.
    expect(positions.statements).toBe(0);
    expect(positions.placed).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('places a job after the stops another command added while it held the route row (a race at COMMIT, run again)', async () => {
    const { route, otherJob } = await routeWithAnotherJob(busy);
    // Its statement waited for the route row with a snapshot taken before: it could not see the other's stops, and the
    // deferred unique position check fails at its COMMIT, which must read as a race (the command runs again, now after
    // the other's stops, on reads: the write planned from memory took no round trip, the second run's one).
    const positions = await whileAnotherCommandAddsStops(route, otherJob, 'route row');
    expect(positions.statements).toBe(1);
    expect(positions.placed).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('creates no second route when another command opened one for the day after the lock read: the command is retried and joins it', async () => {
    const jobId = (await jobAt(site.acme.as.dispatcher, PARIS)).id;
    const ctx: CommandContext = { siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: null, role: 'dispatcher' } };
    const serviceDate = new Intl.DateTimeFormat('en-CA', { timeZone: site.acme.site.timezone ?? 'UTC' }).format(new Date());
    const otherRoute = 'route_01OTHERCOMMANDSROUTE00000';
    const outcomes: string[] = [];
    const route = await site.server.services.engine.command(ctx, `job:${jobId}`, async (scope) => {
      const indexed = await indexedDriverFacts(scope.em, scope.siteId, { jobId });
      const job = toJobTarget(indexed.jobRows, jobId);
      const plan = (await planJobDispatch(scope, job))!;
      const place = await lockDriverDayPlace(scope, { driverUserId: late.id, vehicleId: 'veh_none', serviceDate, teamId: null });
      if ('day' in place) {
        // Another writer (one that does not take the driver-day lock) commits an open route for that day meanwhile.
        await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
          em.execute(
            `insert into route (id, site_id, name, workflow_id, workflow_state_id, phase, version, snapshot, driver_user_id, service_date, created_at, updated_at)
             select ?, w.site_id, 'Other', w.id, s->>'id', s->>'phase', 1, jsonb_build_object('value', s->>'key'), ?, ?, now(), now()
             from workflow w, jsonb_array_elements(w.states) s where w.site_id = ? and w.entity_type = 'route' and w.is_current and (s->>'is_initial')::boolean`,
            [otherRoute, late.id, serviceDate, site.acme.site.id],
          ),
        );
      }
      const insert = dispatchInsert(scope, { job_id: jobId, route_id: 'route' in place ? place.route.id : place.routeId, method: 'manual', status: 'processing' });
      try {
        const written = await writeDispatchAtOnce(scope, plan, place, late.id, insert);
        outcomes.push('written');
        return written.route.id;
      } catch (error) {
        outcomes.push(error instanceof OptimisticLockError ? 'raced' : 'failed');
        throw error;
      }
    });
    expect(outcomes).toEqual(['raced', 'written']);
    expect(route).toBe(otherRoute);
    const routes = await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
      em.execute<{ id: string }[]>('select id from route where driver_user_id = ? and service_date = ?', [late.id, serviceDate]),
    );
    expect(routes.map((r) => r.id)).toEqual([otherRoute]);
  });
});

/** The driver's route (after a first dispatch opened it) and another job, whose stops another command will place on it. */
async function routeWithAnotherJob(driver: TestDriver): Promise<{ route: { id: string; service_date: string }; otherJob: string }> {
  await dispatchTo(driver, 'planned');
  const otherJob = (await jobAt(site.acme.as.dispatcher, PARIS)).id;
  const [route] = await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
    em.execute<{ id: string; service_date: string }[]>(`select id, service_date from route where driver_user_id = ? and phase not in ('completed', 'cancelled')`, [driver.id]),
  );
  return { route: route!, otherJob };
}

/**
 * Another command appends `otherJob`'s stops to the route, holding the driver-day lock or the route row, and commits
 * half a second later; a dispatch to the same driver starts meanwhile. The dispatch's round trips and the route's positions.
 */
async function whileAnotherCommandAddsStops(route: { id: string; service_date: string }, otherJob: string, holding: 'driver-day lock' | 'route row'): Promise<{ statements: number; placed: number[] }> {
  const orm = site.server.services.db.orm;
  let dispatched: Promise<Outcome> | undefined;
  await inTenantScope(orm, { siteId: site.acme.site.id }, async (em) => {
    if (holding === 'driver-day lock') await em.execute('select pg_advisory_xact_lock(hashtext(?))', [driverDayLockKey(site.acme.site.id, { driverUserId: busy.id, serviceDate: route.service_date })]);
    else await em.execute('select id from route where id = ? for update', [route.id]);
    await em.execute(
      `insert into route_stop (stop_id, site_id, route_id, job_id, position)
       select s.id, s.site_id, ?, s.job_id, (select max(position) from route_stop where route_id = ?) + row_number() over (order by s.sort_order)
       from stop s where s.job_id = ?`,
      [route.id, route.id, otherJob],
    );
    dispatched = dispatchTo(busy, 'planned');
    await sleep(500);
  });
  const { statements } = await dispatched!;
  const positions = await inTenantScope(orm, { siteId: site.acme.site.id }, (em) =>
    em.execute<{ position: number }[]>('select position from route_stop where route_id = ? order by position', [route.id]),
  );
  return { statements, placed: positions.map((p) => Number(p.position)) };
}
