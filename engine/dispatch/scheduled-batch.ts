import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import type { JsonValue } from '../queue/durable-queue.ts';
import { loadRoute } from '../routes/route-membership.ts';
import type { DispatchDeps } from './dispatch-deps.ts';
import { newId } from '../../persistence/ids.ts';
import { insertDispatch, updateDispatch, type DispatchPlan, type DispatchRow } from './dispatch-record.ts';
import type { DispatchMethod, FailedJob } from './dispatch-types.ts';
import { assertDispatchableZone, loadJobTarget } from './job-target.ts';
import { OUTLIVE_OUTAGES } from '../queue/durable-queue.ts';
import { schedulingTransaction } from './scheduling-commit.ts';

/** The durable queue of dispatches that fall due later (`start_at` / `dispatch_at` in the future). */
export const DISPATCH_QUEUE = 'dispatch';

/** The queue job that carries out a scheduled route dispatch (`POST /dispatch/route` or `/dispatch/team/route`). */
export const ROUTE_DUE = 'dispatch.route-due';
/** The queue job that carries out a scheduled bulk distribution. */
export const BULK_DUE = 'dispatch.bulk-due';

/** `xid` in both: the transaction that stored the records, on BullMQ (see scheduling-commit.ts). */
export type RouteDue = { site_id: string; dispatch_id: string; route_id: string; xid?: string };
export type BulkDue = { site_id: string; team_id: string; dispatch_ids: string[]; optimize_routes: boolean; require_confirmation: boolean; xid?: string };

/**
 * Stores a route dispatch for later: one pending record for the route (no job: each job gets its own record when
 * it is dispatched) with the request as its plan, and a delayed queue job that carries it out then. The route must
 * exist and be open now; the driver, or the team's pick, is decided when it falls due.
 * @throws DomainError 404 route, 409 ROUTE_CLOSED
 */
export async function scheduleRouteDispatch(
  deps: DispatchDeps,
  scope: CommandScope,
  input: { routeId: string; method: DispatchMethod; teamId: string | null; dispatchAt: Date; plan: DispatchPlan },
): Promise<DispatchRow> {
  await loadRoute(scope, input.routeId);
  const row = await pendingDispatch(scope, { jobId: null, ...input });
  const data: RouteDue = { site_id: scope.siteId, dispatch_id: row.id, route_id: input.routeId };
  await enqueue(deps, scope, ROUTE_DUE, row.id, data, input.dispatchAt);
  return row;
}

/**
 * Stores a bulk distribution for later: a pending record per job (so nothing else dispatches it meanwhile: one
 * active dispatch per job), and one delayed queue job for the whole batch, so the distribution (and the route
 * optimization) sees every job at once when it falls due. Jobs that cannot be dispatched now are reported instead.
 */
export async function scheduleBulkDistribute(
  deps: DispatchDeps,
  scope: CommandScope,
  input: { jobIds: string[]; teamId: string; dispatchAt: Date; optimizeRoutes: boolean; requireConfirmation: boolean },
): Promise<{ dispatches: DispatchRow[]; failed: FailedJob[] }> {
  const dispatches: DispatchRow[] = [];
  const failed: FailedJob[] = [];
  const bulk = { key: newId('dispatch'), optimize_routes: input.optimizeRoutes };
  const plan: DispatchPlan = { driver_id: null, vehicle_id: null, route_id: null, strategy: 'load-balanced', require_confirmation: input.requireConfirmation, bulk };
  for (const jobId of input.jobIds) {
    try {
      const job = await loadJobTarget(scope.em, scope.siteId, jobId);
      if (job.phase !== 'unassigned') throw new DomainError(409, 'JOB_NOT_UNASSIGNED', `Job ${job.id} is ${job.phase}; only unassigned jobs are dispatched`, 'job_id');
      await assertDispatchableZone(scope.em, job);
      await assertNotHeld(scope, jobId);
      dispatches.push(await pendingDispatch(scope, { jobId, routeId: null, method: 'team', teamId: input.teamId, dispatchAt: input.dispatchAt, plan }));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      failed.push({ job_id: jobId, error: error.message, code: error.code });
    }
  }
  if (dispatches.length > 0) {
    const data: BulkDue = {
      site_id: scope.siteId, team_id: input.teamId, dispatch_ids: dispatches.map((d) => d.id), optimize_routes: input.optimizeRoutes, require_confirmation: input.requireConfirmation,
    };
    await enqueue(deps, scope, BULK_DUE, bulk.key, data, input.dispatchAt);
  }
  return { dispatches, failed };
}

/** The pending dispatch record of a scheduled dispatch (a job's, or a route's with no job), carrying its plan. */
export function pendingDispatch(scope: CommandScope, input: { jobId: string | null; routeId: string | null; method: DispatchMethod; teamId: string | null; dispatchAt: Date; plan: DispatchPlan }) {
  return insertDispatch(scope, {
    job_id: input.jobId,
    route_id: input.routeId,
    team_id: input.teamId,
    assigned_to_driver_id: input.plan.driver_id,
    assigned_to_vehicle_id: input.plan.vehicle_id,
    method: input.method,
    status: 'pending',
    require_confirmation: input.plan.require_confirmation,
    dispatch_at: input.dispatchAt,
    plan: input.plan,
  });
}

/**
 * Same rules as a single delayed dispatch: the id dedupes (`dispatch.<record id>`, or the bulk key), the table queue commits with the
 * records, and on BullMQ the job names the transaction that stored them.
 */
async function enqueue(deps: DispatchDeps, scope: CommandScope, name: string, key: string, data: { [key: string]: JsonValue }, at: Date): Promise<void> {
  const delayMs = Math.max(0, at.getTime() - scope.clock.now().getTime());
  const xid = await schedulingTransaction(deps.queue, scope);
  await deps.queue.add(DISPATCH_QUEUE, name, xid ? { ...data, xid } : data, { jobId: `dispatch.${key}`, delayMs, ...OUTLIVE_OUTAGES, transaction: scope.em });
}

/**
 * A scheduled dispatch that could not be carried out when it fell due (the job was dispatched by hand meanwhile,
 * nobody is eligible, the optimizer could not place it) is closed with the reason in its decision rather than
 * retried forever. Only while still pending: a record completed or cancelled meanwhile is left alone.
 */
export async function closeFailedDispatch(scope: CommandScope, dispatchId: string, error: DomainError): Promise<void> {
  const decision = (error.details?.decision as Record<string, unknown> | undefined) ?? {};
  const failed = {
    strategy: 'manual' as const,
    tie_rule: '',
    considered: 0,
    eligible: 0,
    candidates: [],
    exclusions: [],
    winner: null,
    ...decision,
    decided_at: scope.clock.now().toISOString(),
    failure: { code: error.code, message: error.message },
  };
  await updateDispatch(scope, dispatchId, { is_active: false, decision: failed }, "status = 'pending' and is_active", [], 'fail');
}

/**
 * A job held by another active dispatch (a pool offer, a scheduled dispatch) is not dispatched by a batch: reported
 * as 409 ALREADY_DISPATCHED instead of failing the batch on the one-active-dispatch-per-job index.
 * @param ownId the batch's own pending record of the job (a scheduled batch that falls due), which is no obstacle
 */
export async function assertNotHeld(scope: CommandScope, jobId: string, ownId?: string): Promise<void> {
  const [active] = await scope.em.execute(
    "select id from dispatch where site_id = ? and job_id = ? and is_active and status <> 'completed' and id <> ?",
    [scope.siteId, jobId, ownId ?? ''],
  );
  if (active) throw new DomainError(409, 'ALREADY_DISPATCHED', `Job ${jobId} already has an active dispatch (in the pool or scheduled)`, 'job_id');
}
