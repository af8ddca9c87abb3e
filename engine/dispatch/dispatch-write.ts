import { OptimisticLockError } from '@mikro-orm/core';
import type { CommandScope } from '../commands/apply-transition.ts';
import { jobFromRow, stopFromRow, type EntityRow } from '../jobs/job-view.ts';
import { assertJobOpen } from '../routes/route-jobs.ts';
import { assertRouteOpen, syncTouchedVersion } from '../routes/route-records.ts';
import { routeFromRow, type RouteRecord } from '../routes/route-view.ts';
import type { Workflow, WorkflowState } from '../../machines/workflow.schema.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { planDispatchMove, recordDispatchMove, type PlannedMove } from './dispatch-moves.ts';
import type { JobDispatchPlan } from './dispatch-plan.ts';
import type { RoutePlace } from './driver-day-route.ts';
import { recordDispatchedRouteCreated, recordRouteJoined, routeWrite } from './dispatch-write-route.ts';

type Written = { jobRow: EntityRow; route: RouteRecord; inserted: unknown };

/**
 * A dispatch's writes in one statement, from the rows the decision read (`plan`): the route created when the driver
 * has none for the day, the job's stops appended to the route's order, the job's route, driver and `dispatch` move,
 * its pending stops' `dispatch` moves (the cascade rule), the route's change record and its own `dispatch` move when
 * it was still unassigned, and the caller's dispatch record (`insert`: an insert, or a pending record's completion,
 * as a CTE returning the row). The same rows, versions, audit records and
 * events, in the same order, as the step-by-step path (`insertRouteUnlessOpen`, `joinRouteWithDriver`,
 * `applyTransition` + `applyCascades`, `dispatchRoute`), which took up to seven round trips.
 * Every row is written under its version check (a new route: under "no open route for the day"): a concurrent
 * change makes the statement miss, and OptimisticLockError rolls the command back (the engine retries it on fresh
 * reads); the deferred foreign keys are not checked before that.
 */
export async function writeDispatchAtOnce(scope: CommandScope, plan: JobDispatchPlan, place: RoutePlace, driverUserId: string, insert: { sql: string; params: unknown[] }): Promise<Written> {
  const { em, siteId } = scope;
  const { job } = plan;
  assertJobOpen({ id: job.id, route_id: null, phase: job.phase, version: job.version, driver_user_id: job.driverUserId }, 'job_id');
  if ('route' in place) assertRouteOpen(place.route);
  const workflow = await workflowById(em, 'route' in place ? place.route.workflowId : place.workflowId);
  const initial = 'route' in place ? null : workflow.states.find((s) => s.is_initial)!;
  const routeState = 'route' in place ? { key: (place.route.snapshot as { value: string }).value, phase: place.route.phase } : initial!;
  const routeMove = routeState.phase === 'unassigned' ? planDispatchMove(workflow, 'route', routeState.key, 'system') ?? null : null;
  const routeId = 'route' in place ? place.route.id : place.routeId;
  const now = new Date();
  const routeSql = routeWrite(scope, place, { routeId, workflow, move: routeMove, now });

  const stopValues = plan.stops.map(() => '(?, ?::int, ?, ?, ?::jsonb)').join(', ');
  const stopParams = plan.stops.flatMap(({ stop, move }) => [stop.id, stop.version, move.stateId, move.phase, move.snapshot]);
  const [written] = await em.execute<(EntityRow & { moved_stops: EntityRow[]; route_row: EntityRow | null; also_inserted: unknown })[]>(
    `with route_row as (${routeSql.sql}),
     placed as (
       insert into route_stop (stop_id, site_id, route_id, job_id, position)
       select s.id, s.site_id, ?, s.job_id, coalesce((select max(position) from route_stop where route_id = ?), 0) + row_number() over (order by s.sort_order, s.id)
       from stop s where s.job_id = ? and s.site_id = ?),
     moved_stops as (${
       plan.stops.length === 0
         ? 'select * from stop where false'
         : `update stop set workflow_state_id = v.state_id, phase = v.phase, snapshot = v.snapshot, version = stop.version + 1, updated_at = ?
       from (values ${stopValues}) as v(id, version, state_id, phase, snapshot)
       where stop.id = v.id and stop.site_id = ? and stop.version = v.version returning stop.*`
     }),
     also as (${insert.sql})
     update job set route_id = ?, driver_user_id = ?, workflow_state_id = ?, phase = ?, snapshot = ?::jsonb, version = version + 2, updated_at = ?
     where id = ? and site_id = ? and version = ? and deleted_at is null
     returning job.*, (select coalesce(json_agg(to_jsonb(m)), '[]'::json) from moved_stops m) as moved_stops,
       (select to_jsonb(r) from route_row r) as route_row, (select to_jsonb(a) from also a) as also_inserted`,
    [
      ...routeSql.params,
      routeId, routeId, job.id, siteId,
      ...(plan.stops.length === 0 ? [] : [now, ...stopParams, siteId]),
      ...insert.params,
      routeId, driverUserId, plan.move.stateId, plan.move.phase, plan.move.snapshot, now, job.id, siteId, job.version,
    ],
  );
  if (!written || written.moved_stops.length !== plan.stops.length || (routeSql.writes && !written.route_row)) throw OptimisticLockError.lockFailed(written ? 'Route' : 'Job');
  const { moved_stops: stopRows, route_row: routeRow, also_inserted: inserted, ...jobRow } = written;
  const route = recordDispatchWrite(scope, plan, place, { workflow, initial, routeMove, routeRow, jobRow, stopRows });
  return { jobRow, route, inserted };
}

type WrittenRows = {
  workflow: Workflow;
  initial: WorkflowState | null;
  routeMove: PlannedMove | null;
  routeRow: EntityRow | null;
  /** The route as written, when known without a row (a dispatch planned from memory); else from `routeRow` or `place`. */
  route?: RouteRecord;
  jobRow: EntityRow;
  stopRows: EntityRow[];
};

/**
 * The records of a dispatch written in one statement, in the order the step-by-step path makes them: the route's
 * creation (`initial`: the state a new route was created in) or join, the job's move, its stops', the route's.
 * @returns the route as written
 */
export function recordDispatchWrite(scope: CommandScope, plan: JobDispatchPlan, place: RoutePlace, rows: WrittenRows): RouteRecord {
  const { job } = plan;
  const { workflow, initial, routeMove, routeRow } = rows;
  const system = { ...scope.actor, role: 'system' as const };
  const finalRoute = rows.route ?? (routeRow ? routeFromRow(routeRow) : (place as { route: RouteRecord }).route);
  if (initial) {
    const created = { ...finalRoute, version: 1, workflowStateId: initial.id, phase: initial.phase };
    recordDispatchedRouteCreated(scope, created, workflow, [job.id]);
  } else if ('route' in place && !place.created) {
    // The route as the join left it: the move (if any) changed only its state and version since.
    const joined = routeMove ? { ...place.route, version: place.route.version + 1, updatedAt: finalRoute.updatedAt } : finalRoute;
    recordRouteJoined(scope, place.route, joined, workflow, job.id);
    syncTouchedVersion(scope, finalRoute.id, joined.version);
  }
  scope.registry.drop(scope.siteId, job.id);
  recordDispatchMove(scope, scope.actor, { kind: 'job', entity: jobFromRow(rows.jobRow) }, plan.move);
  const byId = new Map(rows.stopRows.map((row) => [String(row.id), stopFromRow(row)]));
  for (const { stop, move } of plan.stops) recordDispatchMove(scope, system, { kind: 'stop', entity: byId.get(stop.id)! }, move);
  if (routeMove) recordDispatchMove(scope, system, { kind: 'route', entity: finalRoute }, routeMove);
  return finalRoute;
}
