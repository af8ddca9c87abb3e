import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { OptimisticLockError } from '@mikro-orm/core';
import type { EntityRow } from '../jobs/job-view.ts';
import { assertJobOpen, attachJob, detachJob, loadRouteJob, type RouteJobRow } from './route-jobs.ts';
import { assertServiceDate } from './route-service.ts';
import { assertRouteOpen, findRoute, insertRouteUnlessOpen, syncTouchedVersion, writeRouteChange } from './route-records.ts';
import { routeFromRow, type RouteRecord } from './route-view.ts';
import { driverDayLockKey } from './driver-day-lock.ts';

export type { RouteRecord } from './route-view.ts';

/**
 * The driver's open route (phase not completed/cancelled) for that service day, created (planned, with the driver
 * and vehicle, listing `jobIds` in its create record) if none; with several open routes, the oldest is used.
 * Commands opening the same driver's day take turns (a transaction-scoped advisory lock, taken by the statement
 * that then reads the route `for update`, so a route another command changed meanwhile is read as it left it). A
 * route another command created while this one waited is not in that statement's snapshot: the insert is
 * conditional on no open route existing when it runs, so two commands find one route instead of creating two.
 */
export async function openRouteFor(scope: CommandScope, input: DriverDay): Promise<RouteRecord> {
  return (await openDriverDayRoute(scope, input)).route;
}

type DriverDay = { driverUserId: string; vehicleId: string | null; serviceDate: string; teamId?: string | null; jobIds?: string[] };

const OPEN_ROUTE_SQL = `select * from route where site_id = ? and driver_user_id = ? and service_date = ? and phase not in ('completed', 'cancelled')
   order by created_at, id limit 1 for update`;

/**
 * Takes the driver-day lock (transaction-scoped, keyed by site, driver and date, so commands opening the same day
 * take turns) and reads the day's open route `for update` in the same statement, with the site's current route
 * workflow when there is none (for the route to create). Dispatch's one-statement write (engine/dispatch/driver-day-route.ts) takes the
 * same lock with this function.
 */
export async function lockDriverDay(scope: CommandScope, day: { driverUserId: string; serviceDate: string }): Promise<{ route: RouteRecord } | { route: null; workflowId: string }> {
  assertServiceDate(day.serviceDate, 'service_date');
  // `offset 0` keeps the lock in its own plan node, evaluated before the route is read.
  const [row] = await scope.em.execute<(EntityRow & { current_workflow_id: string | null })[]>(
    `select l.current_workflow_id, r.* from (
       select pg_advisory_xact_lock(hashtext(?)) as locked, (select id from workflow where site_id = ? and entity_type = 'route' and is_current) as current_workflow_id offset 0) l
     left join lateral (${OPEN_ROUTE_SQL}) r on true`,
    [driverDayLockKey(scope.siteId, day), scope.siteId, scope.siteId, day.driverUserId, day.serviceDate],
  );
  if (row?.id) return { route: routeFromRow(row) };
  if (!row?.current_workflow_id) throw DomainError.notFound('Workflow', 'route');
  return { route: null, workflowId: row.current_workflow_id };
}

/** {@link openRouteFor}, telling whether this command created the route (for the job it is opened for). */
export async function openDriverDayRoute(scope: CommandScope, input: DriverDay): Promise<{ route: RouteRecord; created: boolean }> {
  const locked = await lockDriverDay(scope, input);
  if (locked.route) return { route: locked.route, created: false };
  const fields = { driverUserId: input.driverUserId, vehicleId: input.vehicleId, teamId: input.teamId ?? null, serviceDate: input.serviceDate, jobIds: input.jobIds };
  const created = await insertRouteUnlessOpen(scope, fields, locked.workflowId);
  if (created) return { route: created, created: true };
  // Another command created it while this one waited for the lock.
  const [raced] = await scope.em.execute<EntityRow[]>(OPEN_ROUTE_SQL, [scope.siteId, input.driverUserId, input.serviceDate]);
  if (!raced) throw DomainError.conflict('ROUTE_CHANGED', `The route of ${input.driverUserId} on ${input.serviceDate} changed while it was opened; try again`);
  return { route: routeFromRow(raced), created: false };
}

/** Reads a route of the scope's site; 404 DomainError if none. */
export async function loadRoute(scope: CommandScope, routeId: string): Promise<RouteRecord> {
  const route = await findRoute(scope, routeId);
  if (!route) throw new DomainError(404, 'NOT_FOUND', `Route ${routeId} not found`, 'route_id');
  return route;
}

/**
 * Appends the job's stops at the end of the route's order and sets job.route_id (409 if the route is
 * completed/cancelled, 404 unknown). Idempotent if already on it. A job on another route moves: it leaves that one.
 * Writes with raw SQL (job and route versions bumped): re-read ORM-loaded copies with `{refresh: true}`.
 */
export async function addJobToRoute(scope: CommandScope, routeId: string, jobId: string): Promise<void> {
  const route = await loadRoute(scope, routeId);
  const job = await loadRouteJob(scope, jobId);
  if (job.route_id === routeId) return;
  assertRouteOpen(route);
  assertJobOpen(job, 'job_id');
  await attachJob(scope, routeId, job);
  await writeRouteChange(scope, route, {}, 'add_job', { after: { added_job_id: jobId } });
}

/**
 * Dispatch's join, after `openRouteFor` or `loadRoute`: the job (as read earlier in this command, at `version`)
 * goes on the route with its driver in one statement (its stops appended to the route's order, `route_id` and
 * `driver_user_id` set under the version check), and the route records the join unless this command created it
 * for the job. A job already on the route only gets its driver, and the route a new version (checked: the route
 * as read, still the driver's); one on another route leaves it first.
 * @returns the job row as written (the dispatch transition starts from it) and the route after its change record
 * @throws OptimisticLockError when the job (or the route it stays on) changed since it was read (the engine retries the command)
 */
export async function joinRouteWithDriver(
  scope: CommandScope,
  opened: { route: RouteRecord; created: boolean },
  job: { id: string; routeId: string | null; phase: string; version: number; driverUserId: string | null },
  driverUserId: string,
  alsoInsert?: { sql: string; params: unknown[] },
): Promise<{ jobRow: EntityRow; route: RouteRecord; inserted: unknown }> {
  const { route } = opened;
  // The caller's own insert (`... returning *`) rides in the same statement: its row comes back as `inserted`.
  const extra = alsoInsert ? { cte: `, also as (${alsoInsert.sql})`, returning: ', (select to_jsonb(a) from also a) as also_inserted', params: alsoInsert.params } : { cte: '', returning: '', params: [] };
  const joining = job.routeId !== route.id;
  let version = job.version;
  if (joining) {
    assertRouteOpen(route);
    const row: RouteJobRow = { id: job.id, route_id: job.routeId, phase: job.phase, version, driver_user_id: job.driverUserId };
    assertJobOpen(row, 'job_id');
    if (row.route_id) await detachJob(scope, row, { recordOn: row.route_id });
    version = row.version;
  }
  const now = new Date();
  // When the version check fails, the caller's insert ran anyway: the error rolls the whole command back.
  const [written] = joining
    ? await scope.em.execute<(EntityRow & { also_inserted?: unknown })[]>(
        `with placed as (
           insert into route_stop (stop_id, site_id, route_id, job_id, position)
           select s.id, s.site_id, ?, s.job_id, coalesce((select max(position) from route_stop where route_id = ?), 0) + row_number() over (order by s.sort_order, s.id)
           from stop s where s.job_id = ? and s.site_id = ?)${extra.cte}
         update job set route_id = ?, driver_user_id = ?, version = version + 1, updated_at = ?
         where id = ? and site_id = ? and version = ? and deleted_at is null returning job.*${extra.returning}`,
        [route.id, route.id, job.id, scope.siteId, ...extra.params, route.id, driverUserId, now, job.id, scope.siteId, version],
      )
    : await scope.em.execute<(EntityRow & { also_inserted?: unknown; route_row?: EntityRow | null })[]>(
        // The route the job stays on moves a version too, under its check and only while it is still this driver's:
        // a concurrent change of its driver or state (PUT /route, POST /route/state) that read the job unassigned
        // then fails its own version check, and one that committed first makes this statement miss.
        `with route_row as (update route set version = version + 1, updated_at = ? where id = ? and site_id = ? and version = ? and driver_user_id = ? returning *)${extra.cte}
         update job set driver_user_id = ? where id = ? and site_id = ? and version = ? and deleted_at is null and exists (select 1 from route_row)
         returning job.*, (select to_jsonb(r) from route_row r) as route_row${extra.returning}`,
        [now, route.id, scope.siteId, route.version, driverUserId, ...extra.params, driverUserId, job.id, scope.siteId, version],
      );
  if (!written) throw OptimisticLockError.lockFailed(joining ? 'Job' : 'Route');
  const { also_inserted: inserted, route_row: routeRow, ...jobRow } = written;
  if (!joining) {
    const moved = routeFromRow(routeRow as EntityRow);
    syncTouchedVersion(scope, moved.id, moved.version);
    return { jobRow, route: moved, inserted };
  }
  syncTouchedVersion(scope, job.id, Number(jobRow.version));
  // A route created for this job lists it in its create record already (as a route created with jobs does).
  if (opened.created) return { jobRow, route, inserted };
  return { jobRow, route: await writeRouteChange(scope, route, {}, 'add_job', { after: { added_job_id: job.id } }), inserted };
}

/** Removes the job and its stops from its route (no-op if none), which records it. @returns the route it left, if any */
export async function removeJobFromRoute(scope: CommandScope, jobId: string): Promise<string | null> {
  const job = await loadRouteJob(scope, jobId);
  const routeId = job.route_id;
  if (routeId) await detachJob(scope, job, { recordOn: routeId });
  return routeId;
}

/** Sets the route's driver and vehicle (dispatch of a whole route). 409 if the route is completed/cancelled. */
export async function assignRouteDriver(scope: CommandScope, routeId: string, input: { driverUserId: string; vehicleId: string | null }): Promise<RouteRecord> {
  const route = await loadRoute(scope, routeId);
  assertRouteOpen(route);
  if (route.driverUserId === input.driverUserId && route.vehicleId === input.vehicleId) return route;
  return writeRouteChange(scope, route, { driver_user_id: input.driverUserId, vehicle_id: input.vehicleId }, 'assign_driver');
}

/** The job ids of a route in order (by their first stop's place; jobs without stops last). */
export async function routeJobIds(scope: CommandScope, routeId: string): Promise<string[]> {
  const rows = await scope.em.execute<{ id: string }[]>(
    `select j.id from job j left join route_stop rs on rs.job_id = j.id and rs.route_id = j.route_id
     where j.route_id = ? and j.site_id = ? and j.deleted_at is null
     group by j.id order by min(rs.position) nulls last, j.created_at, j.id`,
    [routeId, scope.siteId],
  );
  return rows.map((r) => r.id);
}
