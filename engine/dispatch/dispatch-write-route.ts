import { buildEntityMachine } from '../../machines/entity-machine.ts';
import { restoreSnapshot } from '../../machines/entity-snapshot.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import { auditRecordValues } from '../../persistence/audit.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { recordRouteCreated } from '../routes/route-records.ts';
import { toRouteData, type RouteRecord } from '../routes/route-view.ts';
import type { PlannedMove } from './dispatch-moves.ts';
import type { RoutePlace } from './driver-day-route.ts';

type RouteWrite = { sql: string; params: unknown[]; writes: boolean };

/**
 * The route's part of the dispatch statement (a CTE returning the route as written, or nothing): a new route is
 * inserted already past its `dispatch` move (`move`), unless an open route for the driver's day exists by then; an
 * existing one gets one version for the join (unless this command created it) and one for the move, under its
 * version check.
 */
export function routeWrite(scope: CommandScope, place: RoutePlace, input: { routeId: string; workflow: Workflow; move: PlannedMove | null; now: Date }): RouteWrite {
  const { siteId, actor } = scope;
  const { routeId, workflow, move, now } = input;
  if ('day' in place) {
    const { day } = place;
    const initial = workflow.states.find((s) => s.is_initial)!;
    const state = move ? [move.stateId, move.phase, 2, move.snapshot] : [initial.id, initial.phase, 1, JSON.stringify({ value: initial.key })];
    return {
      sql: `insert into route (id, site_id, name, workflow_id, workflow_state_id, phase, version, snapshot, driver_user_id, vehicle_id, team_id, service_date, created_by_user_id, created_at, updated_at)
        select ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?
        where not exists (select 1 from route where site_id = ? and driver_user_id = ? and service_date = ? and phase not in ('completed', 'cancelled'))
        returning *`,
      params: [
        routeId, siteId, `Route ${day.serviceDate}`, workflow.id, ...state, day.driverUserId, day.vehicleId, day.teamId, day.serviceDate, actor.userId, now, now,
        siteId, day.driverUserId, day.serviceDate,
      ],
      writes: true,
    };
  }
  const versions = (place.created ? 0 : 1) + (move ? 1 : 0);
  if (versions === 0) return { sql: 'select * from route where false', params: [], writes: false };
  const sets = move ? 'workflow_state_id = ?, phase = ?, snapshot = ?::jsonb, ' : '';
  return {
    sql: `update route set ${sets}version = version + ?, updated_at = ? where id = ? and site_id = ? and version = ? returning route.*`,
    params: [...(move ? [move.stateId, move.phase, move.snapshot] : []), versions, now, routeId, siteId, place.route.version],
    writes: true,
  };
}

/**
 * The route's create record and `route:create` event, as `insertRouteUnlessOpen` makes them (`route` at version 1,
 * in the workflow's initial state: the machine's snapshot of that state, shared, not a new initial transition).
 */
export function recordDispatchedRouteCreated(scope: CommandScope, route: RouteRecord, workflow: Workflow, jobIds: string[]): void {
  const snapshot = restoreSnapshot(buildEntityMachine(workflow), { value: workflow.states.find((s) => s.is_initial)!.key });
  recordRouteCreated(scope, route, workflow, snapshot, jobIds);
}

/** The route's `add_job` record and `route:update` event, as `writeRouteChange` makes them for a join. */
export function recordRouteJoined(scope: CommandScope, before: RouteRecord, after: RouteRecord, workflow: Workflow, jobId: string): void {
  const { siteId, actor } = scope;
  const data = { ...toRouteData(after, workflow), added_job_id: jobId };
  scope.pending.audits.push(auditRecordValues(actor, { siteId, action: 'add_job', entityType: 'Route', entityId: before.id, before: toRouteData(before, workflow), after: data, changesFromData: true }));
  scope.pending.events.push({ siteId, event: 'route:update', entityType: 'route', entityId: before.id, entityVersion: after.version, data, timestamp: scope.clock.now() });
}
