import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import type { CommandContext } from '../engine.ts';
import { jobDetailAndRouteAtCommit } from '../jobs/job-detail-row.ts';
import type { JobData } from '../jobs/job-view.ts';
import { findRoute } from '../routes/route-records.ts';
import { routeFromRow, toRouteData, type RouteData, type RouteRecord } from '../routes/route-view.ts';
import type { AnswerAtCommit } from '../runtime/answer-at-commit.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { assertVehicle, assignJob, type Assigned } from './assign-job.ts';
import type { DispatchDeps } from './dispatch-deps.ts';
import { toDispatchData, type DispatchData, type DispatchPlan } from './dispatch-record.ts';
import { driverWithVehicle } from './driver-facts.ts';
import { getDispatchSettings } from './dispatch-settings.ts';
import type { DispatchMethod, SelectionStrategy, Strategy } from './dispatch-types.ts';
import { scheduleDispatch } from './scheduled-dispatch.ts';
import { dispatchByStrategy } from './strategy-dispatch.ts';
import { answerMissingTeam, checkTeamWithNext } from './team-check.ts';

export type AssignRequest = {
  job_id: string;
  driver_id?: string;
  vehicle_id?: string;
  method?: DispatchMethod;
  require_confirmation?: boolean;
  start_at?: string;
  route_id?: string;
};

export type TeamJobRequest = {
  job_id: string;
  team_id: string;
  route_id?: string;
  vehicle_id?: string;
  selection_strategy?: SelectionStrategy;
  require_confirmation?: boolean;
  start_at?: string;
};

/** What a dispatch call answers: the record (with its decision), and the job and route as they now are. */
export type DispatchOutcome = { dispatch: DispatchData; job: JobData | null; route: RouteData | null; scheduled: boolean };

/** What a team dispatch answers: the outcome, and the driver picked by which strategy (none yet when scheduled). */
type TeamOutcome = DispatchOutcome & { selected_driver_id: string | null; selected_driver_name: string | null; selection_strategy: SelectionStrategy };

const STRATEGY_METHODS: ReadonlySet<string> = new Set(['round-robin', 'priority', 'load-balanced', 'zone-based', 'auto']);

/**
 * POST /dispatch/assign: with `driver_id`, a manual assignment to that driver; without it, `method` names the
 * strategy that picks the driver (`auto`: the site's strategy). `start_at` in the future stores the dispatch and
 * carries it out then (durable delayed job); a named driver and their vehicle are checked at once all the same.
 * @throws DomainError 400 DRIVER_REQUIRED, and those of `assignJob` / `dispatchByStrategy`
 */
export async function assignDispatch(deps: DispatchDeps, ctx: CommandContext, request: AssignRequest): Promise<DispatchOutcome> {
  const method = request.method ?? 'manual';
  if (!request.driver_id && !STRATEGY_METHODS.has(method)) {
    throw DomainError.invalid('DRIVER_REQUIRED', `driver_id is required for method ${method}; without it, name a strategy method (${[...STRATEGY_METHODS].join(', ')})`, 'driver_id');
  }
  return deps.engine.command(ctx, `job:${request.job_id}`, async (scope) => {
    const strategy = request.driver_id ? null : await strategyFor(scope, method);
    const plan: DispatchPlan = {
      driver_id: request.driver_id ?? null,
      vehicle_id: request.vehicle_id ?? null,
      route_id: request.route_id ?? null,
      strategy,
      require_confirmation: request.require_confirmation ?? false,
    };
    const later = futureInstant(scope, request.start_at);
    if (later) {
      // A named driver and their vehicle are checked now, as for a route stored for later.
      if (request.driver_id) await driverWithVehicle(scope.em, scope.siteId, { driver_id: request.driver_id, vehicle_id: request.vehicle_id });
      if (request.vehicle_id) await assertVehicle(scope, request.vehicle_id);
      return scheduled(await scheduleDispatch(deps, scope, { jobId: request.job_id, method, teamId: null, dispatchAt: later, plan }));
    }
    const common = { jobId: request.job_id, vehicleId: plan.vehicle_id, routeId: plan.route_id, requireConfirmation: plan.require_confirmation, method };
    const assigned = request.driver_id
      ? await assignJob(scope, { ...common, driverId: request.driver_id })
      : await dispatchByStrategy(deps, scope, { ...common, strategy: strategy! });
    return outcome(scope, assigned);
  });
}

/**
 * POST /dispatch/team/job: a driver of the team picked by `selection_strategy` (eta by default).
 * @throws DomainError 404 team_id, 422 NO_ELIGIBLE_DRIVER, and those of `dispatchByStrategy`
 */
export async function dispatchToTeam(deps: DispatchDeps, ctx: CommandContext, request: TeamJobRequest): Promise<TeamOutcome> {
  const strategy = request.selection_strategy ?? 'eta';
  return deps.engine.command<TeamOutcome>(ctx, `job:${request.job_id}`, async (scope) => {
    // The team's check travels with the next statement (the head read, or the scheduled dispatch's write), not in a round trip of its own.
    await checkTeamWithNext(scope, request.team_id);
    const plan: DispatchPlan = { driver_id: null, vehicle_id: request.vehicle_id ?? null, route_id: request.route_id ?? null, strategy, require_confirmation: request.require_confirmation ?? false };
    const later = futureInstant(scope, request.start_at);
    if (later) {
      const row = await scheduleDispatch(deps, scope, { jobId: request.job_id, method: 'team', teamId: request.team_id, dispatchAt: later, plan });
      return { ...scheduled(row), selected_driver_id: null, selected_driver_name: null, selection_strategy: strategy };
    }
    const assigned = await dispatchByStrategy(deps, scope, {
      jobId: request.job_id,
      strategy,
      method: 'team',
      teamId: request.team_id,
      routeId: plan.route_id,
      vehicleId: plan.vehicle_id,
      requireConfirmation: plan.require_confirmation,
    });
    return outcome(scope, assigned).map((answer) => ({ ...answer, selected_driver_id: assigned.driver.userId, selected_driver_name: assigned.driver.name, selection_strategy: strategy }));
  }).catch((error: unknown) => {
    throw answerMissingTeam(error, request.team_id);
  });
}

/**
 * The job and route as the dispatch left them, read in one statement that goes out with the command's COMMIT (no
 * round trip of its own): the job with its stops and their addresses, without entity hydration, and the route's row.
 */
export function outcome(scope: CommandScope, assigned: Assigned): AnswerAtCommit<DispatchOutcome> {
  return jobDetailAndRouteAtCommit(scope.siteId, scope.actor, assigned.job.id, assigned.route.id).map(async ({ job, route }, workflows) => {
    const record = route ? routeFromRow(route) : null;
    return { dispatch: toDispatchData(assigned.dispatch), job, route: record ? toRouteData(record, await workflows(record.workflowId)) : null, scheduled: false };
  });
}

export async function routeData(scope: CommandScope, routeId: string): Promise<RouteData | null> {
  const route = await findRoute(scope, routeId);
  return route ? routeView(scope, route) : null;
}

const routeView = async (scope: CommandScope, route: RouteRecord): Promise<RouteData> => toRouteData(route, await workflowById(scope.em, route.workflowId));

/** `auto` and a method without a strategy of its own run the site's strategy. */
async function strategyFor(scope: CommandScope, method: DispatchMethod): Promise<Strategy> {
  if (method === 'round-robin' || method === 'priority' || method === 'load-balanced' || method === 'zone-based') return method;
  return (await getDispatchSettings(scope.em, scope.siteId)).strategy;
}

export async function assertTeam(scope: CommandScope, teamId: string): Promise<void> {
  const [team] = await scope.em.execute('select id from team where id = ? and site_id = ? and is_active', [teamId, scope.siteId]);
  if (!team) throw new DomainError(404, 'NOT_FOUND', `Team ${teamId} not found`, 'team_id');
}

/** `start_at` when it is in the future (the dispatch waits for it); null for now or the past. */
export function futureInstant(scope: CommandScope, startAt: string | undefined): Date | null {
  if (!startAt) return null;
  const at = new Date(startAt);
  if (Number.isNaN(at.getTime())) throw DomainError.invalid('INVALID_START_AT', `start_at ${startAt} is not a date-time`, 'start_at');
  return at.getTime() > scope.clock.now().getTime() ? at : null;
}

function scheduled(row: Parameters<typeof toDispatchData>[0]): DispatchOutcome {
  return { dispatch: toDispatchData(row), job: null, route: null, scheduled: true };
}

/** A second active dispatch of one job hits the unique index: report it as the conflict it is. */
export function toDispatchConflict(error: unknown, jobId: string): unknown {
  if (error instanceof UniqueConstraintViolationException) {
    return new DomainError(409, 'ALREADY_DISPATCHED', `Job ${jobId} already has an active dispatch (in the pool or scheduled)`, 'job_id');
  }
  return error;
}
