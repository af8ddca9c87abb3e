import { newId } from '../../persistence/ids.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import type { RouteRecord } from '../routes/route-view.ts';
import { formatSql } from '../runtime/direct-execute.ts';
import { deferStatements } from '../runtime/deferred-writes.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { DISPATCH_VALUE_COLUMNS, dispatchColumnValues } from './dispatch-columns.ts';
import { planDispatchMove } from './dispatch-moves.ts';
import type { JobDispatchPlan } from './dispatch-plan.ts';
import type { DispatchRow, NewDispatch } from './dispatch-record.ts';
import { completedRow, completionValues } from './dispatch-completion.ts';
import { recordDispatchWrite } from './dispatch-write.ts';
import type { DriverDay, RoutePlace } from './driver-day-route.ts';
import { rememberDriverDayRoute, takeDriverDayRoute } from './driver-day-routes.ts';
import { driverDayArgs, PLANNED_COMPLETING_DRIVER_DAY_STATEMENT, PLANNED_DRIVER_DAY_STATEMENT } from './driver-day-statement.ts';
import { asJsonb } from '../../persistence/jsonb-order.ts';
import { preparedStatements } from './prepared-statement.ts';
import { driverDayLockKey } from '../routes/driver-day-lock.ts';

type Written = { jobRow: EntityRow; route: RouteRecord; inserted: unknown };

/**
 * A planned dispatch (`planJobDispatch`) to the driver's open route of the day as this process remembers it
 * (`takeDriverDayRoute`: join it, or create one when none is known), in no round trip of its own: the driver-day
 * lock and the write statement (`PLANNED_DRIVER_DAY_STATEMENT`, the same writes as `dispatchToDriverDay`'s) go out
 * with the command's next statement (`deferStatements`), and the rows, audit records and events are worked out here from
 * the rows the decision read, as that statement will write them. The statement checks that the plan held (the
 * route, its version, the job and stops written), else the transaction fails and the command runs again on reads.
 * @returns what will have been written, or null when it cannot be planned from memory (no `planAhead`, no rows read
 *   with the job, a route to read first): the caller writes the usual way then
 */
export async function dispatchPlanned(
  scope: CommandScope,
  plan: JobDispatchPlan,
  input: { day: DriverDay; driverUserId: string; routeWorkflowId: string | null; recordFor(routeId: string): NewDispatch; pending?: DispatchRow | undefined },
): Promise<Written | null> {
  const { em, siteId, planAhead } = scope;
  const { job } = plan;
  const { day } = input;
  if (!planAhead || !job.rows) return null;
  const known = takeDriverDayRoute(scope, day);
  // Without the site's route workflow nothing can be created: the usual path says why.
  if (!known || (!known.route && !input.routeWorkflowId)) return null;
  const now = new Date();
  const joined = known.route;
  const workflow = await workflowById(em, joined ? joined.workflowId : input.routeWorkflowId!);
  const initial = joined ? null : (workflow.states.find((s) => s.is_initial) ?? null);
  if (!joined && !initial) return null;
  const routeMove = initial ? (planDispatchMove(workflow, 'route', initial.key, 'system') ?? null) : null;
  const routeId = joined ? joined.id : newId('route');
  const fields = input.recordFor(routeId);
  const { pending } = input;
  const record = pending ? completionValues(scope, pending, fields) : dispatchColumnValues(scope, fields, DISPATCH_VALUE_COLUMNS);
  const args = driverDayArgs(scope, { plan, day, driverUserId: input.driverUserId, routeId, workflowId: joined ? null : workflow.id, initial, routeMove, record, now });
  const lock = formatSql(em, 'select pg_advisory_xact_lock(hashtext(?))', [driverDayLockKey(siteId, day)]);
  const statement = pending ? PLANNED_COMPLETING_DRIVER_DAY_STATEMENT : PLANNED_DRIVER_DAY_STATEMENT;
  const statements = await preparedStatements(em, statement, [...args, routeId, joined ? joined.version : null], lock);
  // A command's own transaction (the one with `planAhead`) always has a statement queue: a plan is never dropped.
  if (!deferStatements(em, ...statements)) throw new Error('a planned dispatch outside a command transaction');

  const state = routeMove ?? (initial ? { stateId: initial.id, phase: initial.phase, snapshot: JSON.stringify({ value: initial.key }) } : null);
  const route: RouteRecord = joined
    ? { ...joined, version: joined.version + 1, updatedAt: now }
    : {
        id: routeId, siteId, name: `Route ${day.serviceDate}`, workflowId: workflow.id, workflowStateId: state!.stateId, phase: state!.phase,
        version: routeMove ? 2 : 1, snapshot: JSON.parse(state!.snapshot), driverUserId: input.driverUserId, vehicleId: day.vehicleId, teamId: day.teamId,
        serviceDate: day.serviceDate, cancellationNotes: null, createdByUserId: scope.actor.userId, startedAt: null, completedAt: null, createdAt: now, updatedAt: now,
      };
  const moved = { workflow_state_id: plan.move.stateId, phase: plan.move.phase, snapshot: JSON.parse(plan.move.snapshot), updated_at: now };
  const jobRow = { ...job.rows.job, ...moved, route_id: routeId, driver_user_id: input.driverUserId, version: job.version + 2 };
  const stopRows = plan.stops.map(({ stop, move }) => ({
    ...job.rows!.stops.find((row) => row.id === stop.id),
    workflow_state_id: move.stateId, phase: move.phase, snapshot: JSON.parse(move.snapshot), version: stop.version + 1, updated_at: now,
  }));
  const place: RoutePlace = joined ? { route: joined, created: false } : { day, workflowId: workflow.id, routeId };
  recordDispatchWrite(scope, plan, place, { workflow, initial, routeMove, routeRow: null, route, jobRow, stopRows });
  rememberDriverDayRoute(scope, day, route);
  const inserted = pending
    ? completedRow(pending, fields, record.values, routeId, now)
    : { id: record.id, site_id: siteId, ...dispatchValues(record.values, fields), route_id: routeId, is_active: true, version: 1, created_at: now, updated_at: now };
  return { jobRow, route, inserted };
}

/** A dispatch record's inserted values (`dispatchColumnValues`) as its row reads back: JSON columns as `jsonb` gives them (from `fields`, the values they were written from). */
function dispatchValues(values: unknown[], fields: NewDispatch): Record<string, unknown> {
  return Object.fromEntries(DISPATCH_VALUE_COLUMNS.map((column, i) => [column, column === 'decision' || column === 'plan' ? asJsonb(fields[column] ?? null) : values[i]]));
}
