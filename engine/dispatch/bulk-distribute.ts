import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import type { CommandContext } from '../engine.ts';
import { optimizedDistribute, type ProviderFor } from './bulk-optimize.ts';
import type { DispatchDeps } from './dispatch-deps.ts';
import { toDispatchData, type DispatchData, type DispatchRow } from './dispatch-record.ts';
import { assertTeam, futureInstant } from './dispatch.service.ts';
import { loadJobTarget, type JobTarget } from './job-target.ts';
import type { FailedJob } from './dispatch-types.ts';
import { inSavepoint } from './savepoint.ts';
import { assertNotHeld, closeFailedDispatch, scheduleBulkDistribute, type BulkDue } from './scheduled-batch.ts';
import { assertScheduleSettled } from './scheduling-commit.ts';
import { dispatchByStrategy } from './strategy-dispatch.ts';

export type BulkRequest = { job_ids: string[]; team_id: string; optimize_routes?: boolean; time_budget_ms?: number; require_confirmation?: boolean; start_at?: string };
export type BulkRoute = { route_id: string; driver_id: string; driver_name: string; optimized: boolean; dispatched_job_ids: string[] };
/** `scheduled`: start_at is in the future, `dispatches` are the pending records (one per job) that will run it. */
export type BulkResult = { routes: BulkRoute[]; failed_jobs: FailedJob[]; scheduled: boolean; dispatches: DispatchData[] };

/** The optimizer's budget when the request names none: enough for a team's day, short enough for a request. */
export const DEFAULT_BULK_BUDGET_MS = 1_000;

/**
 * POST /dispatch/bulk-distribute: spreads the jobs over the team's eligible drivers.
 * - Without `optimize_routes`: one load-balanced decision per job (fewest open jobs, then nearest), most urgent job
 *   first (earliest deadline, then the order given); each decision sees the loads the previous ones added, since
 *   they share the transaction.
 * - With `optimize_routes`: the route optimizer assigns and orders all the jobs at once (see `optimizedDistribute`).
 * A job that cannot go is reported in `failed_jobs` (its savepoint is undone); the others go. `start_at` in the
 * future stores the batch (a pending record per job) and runs it then, as one batch (durable delayed job).
 * @param providerFor the site's mapping provider (the optimizer's travel matrix); the offline one when omitted
 * @throws DomainError 404 team_id, 400 INVALID_START_AT
 */
export async function bulkDistribute(deps: DispatchDeps, ctx: CommandContext, request: BulkRequest, providerFor?: ProviderFor): Promise<BulkResult> {
  const jobIds = [...new Set(request.job_ids)];
  const scheduled = await deps.engine.command(ctx, `team:${request.team_id}`, async (scope) => {
    await assertTeam(scope, request.team_id);
    const later = futureInstant(scope, request.start_at);
    if (!later) return null;
    const { dispatches, failed } = await scheduleBulkDistribute(deps, scope, {
      jobIds, teamId: request.team_id, dispatchAt: later, optimizeRoutes: request.optimize_routes ?? false, requireConfirmation: request.require_confirmation ?? false,
    });
    return { routes: [], failed_jobs: failed, scheduled: true, dispatches: dispatches.map(toDispatchData) };
  });
  if (scheduled) return scheduled;
  const options = { teamId: request.team_id, requireConfirmation: request.require_confirmation ?? false };
  if (request.optimize_routes) {
    return optimizedDistribute(deps, ctx, { ...options, jobIds, timeBudgetMs: request.time_budget_ms ?? DEFAULT_BULK_BUDGET_MS }, providerFor);
  }
  return deps.engine.command(ctx, `team:${request.team_id}`, (scope) => balancedDistribute(deps, scope, { ...options, jobIds }));
}

/**
 * Carries out a scheduled bulk distribution when it falls due (as the system, once): the jobs whose records are
 * still pending go, through the same path as an immediate request; each record is completed by its job's dispatch,
 * or closed with the reason when its job cannot go.
 */
export async function runScheduledBulk(deps: DispatchDeps, ctx: CommandContext, due: BulkDue): Promise<void> {
  const rows = await deps.engine.command(ctx, `team:${due.team_id}`, async (scope) => {
    await assertScheduleSettled(scope.em, due.xid);
    return scope.em.execute<DispatchRow[]>(
      "select * from dispatch where id in (?) and site_id = ? and status = 'pending' and dispatched_at is null and is_active and job_id is not null order by id",
      [due.dispatch_ids, scope.siteId],
    );
  });
  if (rows.length === 0) return;
  const dispatchIds = new Map(rows.map((r) => [r.job_id!, r.id]));
  const options = { teamId: due.team_id, requireConfirmation: due.require_confirmation, jobIds: [...dispatchIds.keys()], dispatchIds };
  const result = due.optimize_routes
    ? await optimizedDistribute(deps, ctx, { ...options, timeBudgetMs: DEFAULT_BULK_BUDGET_MS })
    : await deps.engine.command(ctx, `team:${due.team_id}`, (scope) => balancedDistribute(deps, scope, options));
  if (result.failed_jobs.length === 0) return;
  await deps.engine.command(ctx, `team:${due.team_id}`, async (scope) => {
    for (const failure of result.failed_jobs) {
      const id = dispatchIds.get(failure.job_id);
      if (id) await closeFailedDispatch(scope, id, new DomainError(422, failure.code, failure.error));
    }
  });
}

type Balanced = { teamId: string; requireConfirmation: boolean; jobIds: string[]; dispatchIds?: Map<string, string> };

async function balancedDistribute(deps: DispatchDeps, scope: CommandScope, request: Balanced): Promise<BulkResult> {
  const failed: FailedJob[] = [];
  const targets: JobTarget[] = [];
  for (const jobId of request.jobIds) {
    try {
      const target = await loadJobTarget(scope.em, scope.siteId, jobId);
      if (target.phase === 'unassigned') await assertNotHeld(scope, jobId, request.dispatchIds?.get(jobId));
      targets.push(target);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      failed.push({ job_id: jobId, error: error.message, code: error.code });
    }
  }
  const ordered = targets.map((t, i) => ({ t, i })).sort((a, b) => urgent(a.t) - urgent(b.t) || a.i - b.i).map((e) => e.t);
  const routes = new Map<string, BulkRoute>();
  for (const target of ordered) {
    const result = await inSavepoint(scope, () =>
      dispatchByStrategy(deps, scope, {
        jobId: target.id, strategy: 'load-balanced', method: 'team', teamId: request.teamId, requireConfirmation: request.requireConfirmation, dispatchId: request.dispatchIds?.get(target.id),
      }),
    );
    if (!result.ok) {
      failed.push({ job_id: target.id, error: result.error.message, code: result.error.code });
      continue;
    }
    const { route, driver } = result.value;
    const entry = routes.get(route.id) ?? { route_id: route.id, driver_id: driver.userId, driver_name: driver.name, optimized: false, dispatched_job_ids: [] };
    entry.dispatched_job_ids.push(target.id);
    routes.set(route.id, entry);
  }
  return { routes: [...routes.values()], failed_jobs: failed, scheduled: false, dispatches: [] };
}

const urgent = (t: JobTarget) => t.deadline ?? Number.POSITIVE_INFINITY;
