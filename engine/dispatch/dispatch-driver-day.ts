import { OptimisticLockError } from '@mikro-orm/core';
import { newId } from '../../persistence/ids.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import { assertJobOpen } from '../routes/route-jobs.ts';
import { routeFromRow, type RouteRecord } from '../routes/route-view.ts';
import { formatSql } from '../runtime/direct-execute.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { DISPATCH_VALUE_COLUMNS, dispatchColumnValues } from './dispatch-columns.ts';
import { planDispatchMove } from './dispatch-moves.ts';
import type { JobDispatchPlan } from './dispatch-plan.ts';
import type { DispatchRow, NewDispatch } from './dispatch-record.ts';
import { completionValues } from './dispatch-completion.ts';
import { recordDispatchWrite } from './dispatch-write.ts';
import type { DriverDay, RoutePlace } from './driver-day-route.ts';
import { executePrepared } from './prepared-statement.ts';
import { COMPLETING_DRIVER_DAY_STATEMENT, DRIVER_DAY_STATEMENT, driverDayArgs } from './driver-day-statement.ts';
import { driverDayLockKey } from '../routes/driver-day-lock.ts';

type Written = { jobRow: EntityRow; route: RouteRecord; inserted: unknown };
type Row = { target: EntityRow | null; current_workflow_id: string | null; job_row: EntityRow | null; moved_stops: EntityRow[]; route_row: EntityRow | null; also_inserted: unknown };

/**
 * A planned dispatch to the driver's open route of the day, in one round trip: the driver-day lock (as
 * `lockDriverDay` takes it, so both take turns), then, in a statement of its own (its snapshot is taken once the lock
 * is held, so it sees a route another command created while this one waited), the route read `for update` and
 * - joined when it is past its own `dispatch` move, or
 * - created already dispatched when the driver has none, in the site's current route workflow (`routeWorkflowId`,
 *   read with the job: the statement creates nothing if it is no longer current),
 * with the job's stops placed, the job's and its stops' moves and the caller's dispatch record, each row under its
 * version check. Runs as a prepared statement (`DRIVER_DAY_STATEMENT`; with `pending`, `COMPLETING_DRIVER_DAY_STATEMENT`,
 * which completes that record instead of inserting one: `also_inserted` is then null when it was no longer pending).
 * @returns what was written, or, having written nothing (the lock is held): the place to write to with
 *   `writeDispatchAtOnce`, i.e. the driver's route when it is still unassigned (its move is planned from its row),
 *   or a new route in the current workflow when that was not `routeWorkflowId`
 * @throws OptimisticLockError when the job or a stop changed since they were read (the engine retries the command);
 *   DomainError 404 when the site has no route workflow
 */
export async function dispatchToDriverDay(
  scope: CommandScope,
  plan: JobDispatchPlan,
  input: { day: DriverDay; driverUserId: string; routeWorkflowId: string | null; dispatch: NewDispatch; pending?: DispatchRow | undefined },
): Promise<Written | { place: RoutePlace }> {
  const { em, siteId } = scope;
  const { job } = plan;
  const { day } = input;
  assertJobOpen({ id: job.id, route_id: null, phase: job.phase, version: job.version, driver_user_id: job.driverUserId }, 'job_id');
  const workflow = input.routeWorkflowId ? await workflowById(em, input.routeWorkflowId) : null;
  const initial = workflow?.states.find((s) => s.is_initial) ?? null;
  const routeMove = workflow && initial ? (planDispatchMove(workflow, 'route', initial.key, 'system') ?? null) : null;
  const routeId = newId('route');
  const record = input.pending ? completionValues(scope, input.pending, input.dispatch) : dispatchColumnValues(scope, input.dispatch, DISPATCH_VALUE_COLUMNS);
  const args = driverDayArgs(scope, { plan, day, driverUserId: input.driverUserId, routeId, workflowId: workflow && initial ? workflow.id : null, initial, routeMove, record });
  const lock = formatSql(em, 'select pg_advisory_xact_lock(hashtext(?))', [driverDayLockKey(siteId, day)]);
  const [row] = await executePrepared<Row>(em, input.pending ? COMPLETING_DRIVER_DAY_STATEMENT : DRIVER_DAY_STATEMENT, args, lock);
  if (!row) throw OptimisticLockError.lockFailed('Job');

  const target = row.target ? routeFromRow(row.target) : null;
  if (!row.route_row) {
    if (target) return { place: { route: target, created: false } };
    if (!row.current_workflow_id) throw DomainError.notFound('Workflow', 'route');
    return { place: { day, workflowId: row.current_workflow_id, routeId: newId('route') } };
  }
  if (!row.job_row || row.moved_stops.length !== plan.stops.length) throw OptimisticLockError.lockFailed('Job');
  const place: RoutePlace = target ? { route: target, created: false } : { day, workflowId: workflow!.id, routeId };
  const route = recordDispatchWrite(scope, plan, place, {
    workflow: target ? await workflowById(em, target.workflowId) : workflow!,
    initial: target ? null : initial,
    routeMove: target ? null : routeMove,
    routeRow: row.route_row,
    jobRow: row.job_row,
    stopRows: row.moved_stops,
  });
  return { jobRow: row.job_row, route, inserted: row.also_inserted };
}
