import type { Logger } from 'pino';
import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import type { CommandContext } from '../engine.ts';
import type { JobHandler, JsonValue } from '../queue/durable-queue.ts';
import { assignJob } from './assign-job.ts';
import type { DispatchDeps } from './dispatch-deps.ts';
import type { DispatchPlan, DispatchRow } from './dispatch-record.ts';
import type { DispatchMethod } from './dispatch-types.ts';
import { assertDispatchableZone, loadJobTarget } from './job-target.ts';
import { BULK_DUE, closeFailedDispatch, DISPATCH_QUEUE, pendingDispatch, ROUTE_DUE, type BulkDue, type RouteDue } from './scheduled-batch.ts';
import { dispatchByStrategy } from './strategy-dispatch.ts';
import { OUTLIVE_OUTAGES } from '../queue/durable-queue.ts';
import { assertScheduleSettled, schedulingTransaction } from './scheduling-commit.ts';

export { DISPATCH_QUEUE };

/** `xid`: the transaction that stored the record, on BullMQ (see scheduling-commit.ts). */
type DueJob = { site_id: string; dispatch_id: string; job_id: string; xid?: string };

/**
 * Stores a dispatch for later (a pending record with `dispatch_at` and the request as its plan) and enqueues a
 * delayed job that carries it out then. The deadline is data: the queue job only wakes it, and its id
 * (`dispatch.<id>`) dedupes, so it runs once even if enqueued twice. On the table queue the job commits with the
 * record; on BullMQ it is added at once and names this transaction, so that a run before it committed is tried
 * again and one whose record never committed does nothing (`assertScheduleSettled`).
 */
export async function scheduleDispatch(
  deps: DispatchDeps,
  scope: CommandScope,
  input: { jobId: string; method: DispatchMethod; teamId: string | null; dispatchAt: Date; plan: DispatchPlan },
): Promise<DispatchRow> {
  const job = await loadJobTarget(scope.em, scope.siteId, input.jobId);
  if (job.phase !== 'unassigned') {
    throw new DomainError(409, 'JOB_NOT_UNASSIGNED', `Job ${job.id} is ${job.phase}; only unassigned jobs are dispatched (return it first)`, 'job_id');
  }
  await assertDispatchableZone(scope.em, job);
  const row = await pendingDispatch(scope, { jobId: job.id, routeId: input.plan.route_id, method: input.method, teamId: input.teamId, dispatchAt: input.dispatchAt, plan: input.plan });
  const delayMs = Math.max(0, input.dispatchAt.getTime() - scope.clock.now().getTime());
  const xid = await schedulingTransaction(deps.queue, scope);
  const data: DueJob = { site_id: scope.siteId, dispatch_id: row.id, job_id: job.id, ...(xid ? { xid } : {}) };
  await deps.queue.add(DISPATCH_QUEUE, 'dispatch.due', data, { jobId: `dispatch.${row.id}`, delayMs, ...OUTLIVE_OUTAGES, transaction: scope.em });
  return row;
}

/**
 * The queue handler: carries out a due dispatch through the command path as the system, once. The record must
 * still be pending and not yet dispatched (a run after a crash, or a dispatch cancelled meanwhile, does nothing).
 * A dispatch that cannot be carried out (the job was dispatched by hand meanwhile, nobody is eligible) is closed
 * with the reason in its decision rather than retried forever. Scheduled route dispatches and bulk distributions
 * (`dispatch.route-due`, `dispatch.bulk-due`) run here too; their modules are imported when first due because they
 * import dispatch.service.ts, which imports this file (a static import would be a cycle).
 */
export function createDueDispatchHandler(deps: DispatchDeps, logger?: Pick<Logger, 'warn'>): JobHandler {
  return async (queued) => {
    if (queued.name === ROUTE_DUE) return runRoute(deps, queued.data as RouteDue, logger);
    if (queued.name === BULK_DUE) {
      const { runScheduledBulk } = await import('./bulk-distribute.ts');
      return runScheduledBulk(deps, systemContext((queued.data as BulkDue).site_id, queued.id), queued.data as BulkDue);
    }
    const due = readDueJob(queued.data);
    const ctx = systemContext(due.site_id, `dispatch.${due.dispatch_id}`);
    try {
      await deps.engine.command(ctx, `job:${due.job_id}`, async (scope) => {
        await assertScheduleSettled(scope.em, due.xid);
        const [row] = await scope.em.execute<DispatchRow[]>(
          "select * from dispatch where id = ? and site_id = ? and status = 'pending' and dispatched_at is null and is_active",
          [due.dispatch_id, due.site_id],
        );
        if (!row?.plan || !row.job_id) return;
        const plan = row.plan;
        const common = { jobId: row.job_id, vehicleId: plan.vehicle_id, routeId: plan.route_id, teamId: row.team_id, requireConfirmation: plan.require_confirmation, dispatchId: row.id };
        if (plan.driver_id) await assignJob(scope, { ...common, driverId: plan.driver_id, method: row.method });
        else await dispatchByStrategy(deps, scope, { ...common, strategy: plan.strategy ?? 'eta', method: row.method });
      });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      await deps.engine.command(ctx, `job:${due.job_id}`, (scope) => closeFailedDispatch(scope, due.dispatch_id, error));
    }
  };
}

/**
 * A due route dispatch; one that cannot be carried out is closed with the reason. Jobs of the route that could not go
 * are on the route's record (`decision.failed_jobs`) and in a warning, for the operator nobody answered.
 */
async function runRoute(deps: DispatchDeps, due: RouteDue, logger: Pick<Logger, 'warn'> | undefined): Promise<void> {
  const { runScheduledRoute } = await import('./route-dispatch.ts');
  const ctx = systemContext(due.site_id, `dispatch.${due.dispatch_id}`);
  try {
    const failed = await runScheduledRoute(deps, ctx, due);
    if (failed.length > 0) {
      logger?.warn({ site_id: due.site_id, dispatch_id: due.dispatch_id, route_id: due.route_id, failed_jobs: failed }, 'scheduled route dispatch ran: some of its jobs could not be dispatched');
    }
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await deps.engine.command(ctx, `route:${due.route_id}`, (scope) => closeFailedDispatch(scope, due.dispatch_id, error));
  }
}

function systemContext(siteId: string, requestId: string): CommandContext {
  return { siteId, actor: { userId: null, applicationId: null, requestId, role: 'system' } };
}

function readDueJob(data: JsonValue): DueJob {
  const value = data as Partial<DueJob> | null;
  if (!value || typeof value.site_id !== 'string' || typeof value.dispatch_id !== 'string' || typeof value.job_id !== 'string' || !['string', 'undefined'].includes(typeof value.xid)) {
    throw new Error('malformed dispatch job: site_id, dispatch_id and job_id are required, xid is text');
  }
  return value as DueJob;
}
