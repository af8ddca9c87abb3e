import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import type { CommandContext } from '../engine.ts';
import { assignRouteDriver, loadRoute, routeJobIds } from '../routes/route-membership.ts';
import { TERMINAL_PHASES, type RouteData } from '../routes/route-view.ts';
import { assertVehicle, assignJob, dispatchRoute } from './assign-job.ts';
import { advanceCursor, decide, namedDecision } from './decide.ts';
import type { DispatchDeps } from './dispatch-deps.ts';
import { toDispatchData, updateDispatch, type DispatchData, type DispatchRow } from './dispatch-record.ts';
import type { DispatchDecision, DispatchMethod, FailedJob, SelectionStrategy } from './dispatch-types.ts';
import { driverWithVehicle } from './driver-facts.ts';
import { assertTeam, futureInstant, routeData } from './dispatch.service.ts';
import { loadJobTarget } from './job-target.ts';
import { inSavepoint } from './savepoint.ts';
import { assertJobsFollowDriver } from '../routes/route-service.ts';
import { scheduleRouteDispatch, type RouteDue } from './scheduled-batch.ts';
import { assertScheduleSettled } from './scheduling-commit.ts';

export type RouteDispatchResult = {
  route: RouteData | null;
  dispatched_job_ids: string[];
  failed_jobs: FailedJob[];
  /** Null while scheduled (a team's pick is made when the dispatch falls due). */
  selected_driver_id: string | null;
  selected_driver_name: string | null;
  /** `start_at` in the future: nothing is dispatched yet; `dispatch` is the pending record that will do it. */
  scheduled: boolean;
  dispatch: DispatchData | null;
};

type RouteRequest = { route_id: string; driver_id: string; vehicle_id?: string; method?: DispatchMethod; require_confirmation?: boolean; team_id?: string; decision?: DispatchDecision };
type TeamRouteRequest = { team_id: string; route_id: string; vehicle_id?: string; selection_strategy?: SelectionStrategy; require_confirmation?: boolean; start_at?: string };

/**
 * POST /dispatch/route: the route gets the driver and vehicle, and each of its unassigned jobs is dispatched to
 * them on this route (one savepoint per job: a job that cannot go is reported in `failed_jobs`, the others go).
 * `start_at` in the future stores a pending route dispatch and carries it out then (durable delayed job); the
 * driver and vehicle are checked now too, so a request that could never work is refused at once.
 * @throws DomainError 404 route / driver, 409 ROUTE_CLOSED, 422 VEHICLE_REQUIRED
 */
export async function dispatchRouteTo(deps: DispatchDeps, ctx: CommandContext, request: RouteRequest & { start_at?: string }): Promise<RouteDispatchResult> {
  return deps.engine.command(ctx, `route:${request.route_id}`, async (scope) => {
    const later = futureInstant(scope, request.start_at);
    if (!later) return publicResult(await dispatchWholeRoute(scope, request));
    const driver = await driverWithVehicle(scope.em, scope.siteId, request);
    if (request.vehicle_id) await assertVehicle(scope, request.vehicle_id);
    const row = await scheduleRouteDispatch(deps, scope, {
      routeId: request.route_id,
      method: request.method ?? 'manual',
      teamId: null,
      dispatchAt: later,
      plan: { driver_id: driver.userId, vehicle_id: request.vehicle_id ?? null, route_id: request.route_id, strategy: null, require_confirmation: request.require_confirmation ?? false },
    });
    return scheduledResult(scope, row, driver);
  });
}

/**
 * POST /dispatch/team/route: the team driver picked by `selection_strategy` (ranked for the route's first open
 * job, among those with room for all its open jobs: see `pickAndDispatch`) takes the whole route. With `start_at` in the future, the pick and the dispatch happen then.
 * @throws DomainError 404 team or route, 422 NO_ELIGIBLE_DRIVER / ROUTE_EMPTY
 */
export async function dispatchRouteToTeam(deps: DispatchDeps, ctx: CommandContext, request: TeamRouteRequest): Promise<RouteDispatchResult & { selection_strategy: SelectionStrategy }> {
  const strategy = request.selection_strategy ?? 'eta';
  return deps.engine.command(ctx, `route:${request.route_id}`, async (scope) => {
    const later = futureInstant(scope, request.start_at);
    await assertTeam(scope, request.team_id);
    if (!later) return { ...publicResult(await pickAndDispatch(deps, scope, request, strategy)), selection_strategy: strategy };
    const row = await scheduleRouteDispatch(deps, scope, {
      routeId: request.route_id,
      method: 'team',
      teamId: request.team_id,
      dispatchAt: later,
      plan: { driver_id: null, vehicle_id: request.vehicle_id ?? null, route_id: request.route_id, strategy, require_confirmation: request.require_confirmation ?? false },
    });
    return { ...(await scheduledResult(scope, row, null)), selection_strategy: strategy };
  });
}

/**
 * Carries out a scheduled route dispatch when it falls due (the queue handler calls it as the system): once, and
 * only while its record is still pending (a rerun after a crash, or a record cancelled meanwhile, does nothing).
 * The route's record is then completed with the driver and the decision; each job has its own record. Nobody awaits
 * the answer, so the jobs that could not go (past the driver's max_load, ...) are kept on the route's record, in its
 * decision's `failed_jobs` (GET /dispatch shows them), and returned for the handler's log.
 * @throws DomainError when the route cannot be dispatched (the handler closes the record with the reason)
 */
export async function runScheduledRoute(deps: DispatchDeps, ctx: CommandContext, due: RouteDue): Promise<FailedJob[]> {
  return deps.engine.command(ctx, `route:${due.route_id}`, async (scope) => {
    await assertScheduleSettled(scope.em, due.xid);
    const [row] = await scope.em.execute<DispatchRow[]>(
      "select * from dispatch where id = ? and site_id = ? and status = 'pending' and dispatched_at is null and is_active",
      [due.dispatch_id, scope.siteId],
    );
    if (!row?.plan || !row.route_id) return [];
    const plan = row.plan;
    const common = { route_id: row.route_id, vehicle_id: plan.vehicle_id ?? undefined, require_confirmation: plan.require_confirmation };
    const result =
      plan.driver_id
        ? await dispatchWholeRoute(scope, { ...common, driver_id: plan.driver_id, method: row.method })
        : await pickAndDispatch(deps, scope, { ...common, team_id: row.team_id! }, (plan.strategy ?? 'eta') as SelectionStrategy);
    const now = scope.clock.now();
    await updateDispatch(scope, row.id, {
      status: 'completed',
      dispatched_at: now,
      completed_at: now,
      assigned_to_driver_id: result.selected_driver_id,
      assigned_to_vehicle_id: result.route?.vehicle_id ?? plan.vehicle_id,
      decision: result.failed_jobs.length > 0 ? { ...result.decision, failed_jobs: result.failed_jobs } : result.decision,
    }, "status = 'pending' and is_active", [], 'dispatch');
    return result.failed_jobs;
  });
}

/**
 * The team's pick takes the route: ranked for the route's first unassigned job, among the drivers with room under
 * their `max_load` for all its unassigned jobs (else the most room any has: see `roomAsked`), since each job is
 * then dispatched to them and those past their limit would stay undispatched on their route.
 */
async function pickAndDispatch(deps: DispatchDeps, scope: CommandScope, request: Omit<TeamRouteRequest, 'start_at'>, strategy: SelectionStrategy) {
  await loadRoute(scope, request.route_id);
  const jobs = await routeJobIds(scope, request.route_id);
  const targets = await Promise.all(jobs.map((id) => loadJobTarget(scope.em, scope.siteId, id)));
  const open = targets.filter((t) => t.phase === 'unassigned');
  const first = open[0];
  if (!first) throw DomainError.unprocessable('ROUTE_EMPTY', `Route ${request.route_id} has no unassigned job to dispatch`);
  const { decision, winner, cursorKey } = await decide(scope.em, scope.siteId, {
    job: first, strategy, teamId: request.team_id, now: scope.clock.now(), mapping: deps.mappingFor(scope.siteId), requireVehicle: !request.vehicle_id, jobCount: open.length,
  });
  if (!winner) throw new DomainError(422, 'NO_ELIGIBLE_DRIVER', `No driver of team ${request.team_id} can take route ${request.route_id}`, 'team_id', { decision });
  if (strategy === 'round-robin') await advanceCursor(scope.em, scope.siteId, cursorKey, winner.userId);
  return dispatchWholeRoute(scope, { ...request, driver_id: winner.userId, method: 'team', decision });
}

/** The answer without the decision (kept on the dispatch records, shown by GET /dispatch). */
function publicResult({ decision: _decision, ...result }: RouteDispatchResult & { decision: DispatchDecision }): RouteDispatchResult {
  return result;
}

async function scheduledResult(scope: CommandScope, row: DispatchRow, driver: { userId: string; name: string } | null): Promise<RouteDispatchResult> {
  return {
    route: await routeData(scope, row.route_id!),
    dispatched_job_ids: [],
    failed_jobs: [],
    selected_driver_id: driver?.userId ?? null,
    selected_driver_name: driver?.name ?? null,
    scheduled: true,
    dispatch: toDispatchData(row),
  };
}

async function dispatchWholeRoute(scope: CommandScope, request: RouteRequest): Promise<RouteDispatchResult & { decision: DispatchDecision }> {
  const driver = await driverWithVehicle(scope.em, scope.siteId, request);
  const vehicleId = driver.vehicleId;
  // Checked before the route takes the driver and vehicle: each job would fail on them, leaving the route theirs.
  if (!driver.active) throw new DomainError(409, 'DRIVER_NOT_ACTIVE', `Driver ${driver.userId} is not active on this site`, 'driver_id');
  if (request.vehicle_id) await assertVehicle(scope, request.vehicle_id);
  // Jobs already given to another driver stay theirs: the route cannot pass to someone else under them.
  await assertJobsFollowDriver(scope, request.route_id, driver.userId, 'driver_id', 'dispatched');
  const route = await assignRouteDriver(scope, request.route_id, { driverUserId: driver.userId, vehicleId });
  const dispatched: string[] = [];
  const failed: FailedJob[] = [];
  let alreadyTheirs = 0;
  for (const jobId of await routeJobIds(scope, route.id)) {
    const target = await loadJobTarget(scope.em, scope.siteId, jobId);
    if (target.phase !== 'unassigned') {
      if (!TERMINAL_PHASES.has(target.phase) && target.driverUserId === driver.userId) alreadyTheirs += 1;
      continue;
    }
    const result = await inSavepoint(scope, () =>
      assignJob(scope, {
        jobId,
        driverId: driver.userId,
        vehicleId,
        routeId: route.id,
        teamId: request.team_id ?? null,
        method: request.method ?? 'manual',
        requireConfirmation: request.require_confirmation ?? false,
        decision: request.decision,
        routeTaken: true,
      }),
    );
    if (result.ok) dispatched.push(jobId);
    else failed.push({ job_id: jobId, error: result.error.message, code: result.error.code });
  }
  // A route with none of its jobs the driver's (none could go) stays as it was planned.
  if (dispatched.length + alreadyTheirs > 0) await dispatchRoute(scope, await loadRoute(scope, route.id));
  return {
    route: await routeData(scope, route.id),
    dispatched_job_ids: dispatched,
    failed_jobs: failed,
    selected_driver_id: driver.userId,
    selected_driver_name: driver.name,
    scheduled: false,
    dispatch: null,
    decision: request.decision ?? namedDecision('manual', driver, scope.clock.now()),
  };
}
