import { OptimisticLockError } from '@mikro-orm/core';
import type { CommandScope } from '../commands/apply-transition.ts';
import { jobFromRow, stopFromRow, type EntityRow } from '../jobs/job-view.ts';
import { syncTouchedVersion } from '../routes/route-records.ts';
import { routeFromRow, type RouteRecord } from '../routes/route-view.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { recordDispatchMove } from './dispatch-moves.ts';
import type { JobDispatchPlan } from './dispatch-plan.ts';
import { recordRouteJoined } from './dispatch-write-route.ts';
import type { DriverDay } from './driver-day-route.ts';

type Written = { jobRow: EntityRow; route: RouteRecord; inserted: unknown };

/** The route id of the dispatch statement below, for the caller's dispatch record insert (`dispatchInsert`'s `routeFrom`). */
export const JOINED_ROUTE_ID = '(select id from joinable)';

/**
 * Driver days this process has dispatched a job to: their route most likely exists (and is past its own dispatch
 * move), so the next dispatch there tries the one statement below first. A hint only: a wrong one costs a statement.
 */
const knownDays = new Set<string>();
const MAX_KNOWN_DAYS = 100_000;
const dayKey = (siteId: string, day: DriverDay) => `${siteId}:${day.driverUserId}:${day.serviceDate}`;

export function knowsDriverDay(siteId: string, day: DriverDay): boolean {
  return knownDays.has(dayKey(siteId, day));
}

export function rememberDriverDay(siteId: string, day: DriverDay): void {
  if (knownDays.size >= MAX_KNOWN_DAYS) knownDays.clear();
  knownDays.add(dayKey(siteId, day));
}

/**
 * The driver-day lock, the read of the driver's open route of the day and, when that route exists and is past its
 * `dispatch` move, the whole dispatch (the join, the job's and its stops' moves, the caller's record): one statement
 * where `lockDriverDayPlace` + `writeDispatchAtOnce` take two. The route row is locked by the statement before it is
 * written, so it needs no version check; the job and stops are written under theirs (OptimisticLockError on a miss).
 * @returns null, having written nothing, when the driver has no such route (none, or one still unassigned): the
 *   caller takes the two-statement path, which creates or moves it
 */
export async function joinKnownRoute(scope: CommandScope, plan: JobDispatchPlan, day: DriverDay, driverUserId: string, insert: { sql: string; params: unknown[] }): Promise<Written | null> {
  const { em, siteId } = scope;
  const { job } = plan;
  const now = new Date();
  const stopValues = plan.stops.map(() => '(?, ?::int, ?, ?, ?::jsonb)').join(', ');
  const stopParams = plan.stops.flatMap(({ stop, move }) => [stop.id, stop.version, move.stateId, move.phase, move.snapshot]);
  // `offset 0` keeps the lock in its own plan node, evaluated before the route is read (as `lockDriverDay`).
  const [row] = await em.execute<{ target: EntityRow | null; job_row: EntityRow | null; moved_stops: EntityRow[]; route_row: EntityRow | null; also_inserted: unknown }[]>(
    `with target as (
       select r.* from (select pg_advisory_xact_lock(hashtext(?)) as locked offset 0) l
       left join lateral (select * from route where site_id = ? and driver_user_id = ? and service_date = ? and phase not in ('completed', 'cancelled')
         order by created_at, id limit 1 for update) r on true),
     joinable as (select * from target where id is not null and phase <> 'unassigned'),
     route_row as (update route set version = route.version + 1, updated_at = ? from joinable j where route.id = j.id and route.site_id = ? returning route.*),
     placed as (
       insert into route_stop (stop_id, site_id, route_id, job_id, position)
       select s.id, s.site_id, j.id, s.job_id, coalesce((select max(position) from route_stop where route_id = j.id), 0) + row_number() over (order by s.sort_order, s.id)
       from stop s cross join joinable j where s.job_id = ? and s.site_id = ?),
     moved_stops as (${
       plan.stops.length === 0
         ? 'select * from stop where false'
         : `update stop set workflow_state_id = v.state_id, phase = v.phase, snapshot = v.snapshot, version = stop.version + 1, updated_at = ?
       from (values ${stopValues}) as v(id, version, state_id, phase, snapshot)
       where stop.id = v.id and stop.site_id = ? and stop.version = v.version and exists (select 1 from joinable) returning stop.*`
     }),
     also as (${insert.sql}),
     job_row as (
       update job set route_id = j.id, driver_user_id = ?, workflow_state_id = ?, phase = ?, snapshot = ?::jsonb, version = job.version + 2, updated_at = ?
       from joinable j where job.id = ? and job.site_id = ? and job.version = ? and job.deleted_at is null returning job.*)
     select (select to_jsonb(t) from target t where t.id is not null) as target, (select to_jsonb(j) from job_row j) as job_row,
       (select coalesce(json_agg(to_jsonb(m)), '[]'::json) from moved_stops m) as moved_stops,
       (select to_jsonb(r) from route_row r) as route_row, (select to_jsonb(a) from also a) as also_inserted`,
    [
      `route:${siteId}:${day.driverUserId}:${day.serviceDate}`, siteId, day.driverUserId, day.serviceDate,
      now, siteId,
      job.id, siteId,
      ...(plan.stops.length === 0 ? [] : [now, ...stopParams, siteId]),
      ...insert.params,
      driverUserId, plan.move.stateId, plan.move.phase, plan.move.snapshot, now, job.id, siteId, job.version,
    ],
  );
  if (!row?.target || row.target.phase === 'unassigned') return null;
  if (!row.job_row || !row.route_row || row.moved_stops.length !== plan.stops.length) throw OptimisticLockError.lockFailed('Job');

  const before = routeFromRow(row.target);
  const route = routeFromRow(row.route_row);
  recordRouteJoined(scope, before, route, await workflowById(em, route.workflowId), job.id);
  syncTouchedVersion(scope, route.id, route.version);
  scope.registry.drop(siteId, job.id);
  recordDispatchMove(scope, scope.actor, { kind: 'job', entity: jobFromRow(row.job_row) }, plan.move);
  const system = { ...scope.actor, role: 'system' as const };
  const byId = new Map(row.moved_stops.map((stopRow) => [String(stopRow.id), stopFromRow(stopRow)]));
  for (const { stop, move } of plan.stops) recordDispatchMove(scope, system, { kind: 'stop', entity: byId.get(stop.id)! }, move);
  return { jobRow: row.job_row, route, inserted: row.also_inserted };
}
