import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { assertJobOpen, attachJob, detachJob, loadRouteJob } from './route-jobs.ts';
import { assertServiceDate } from './route-service.ts';
import { assertRouteOpen, findRoute, insertRoute, writeRouteChange } from './route-records.ts';
import type { RouteRecord } from './route-view.ts';

export type { RouteRecord } from './route-view.ts';

/**
 * The driver's open route (phase not completed/cancelled) for that service day, created (planned, with the driver
 * and vehicle) if none. Two commands opening the same driver's day at once are serialized by a transaction-scoped
 * advisory lock, so they find one route instead of creating two. With several open routes, the oldest is used.
 */
export async function openRouteFor(
  scope: CommandScope,
  input: { driverUserId: string; vehicleId: string | null; serviceDate: string; teamId?: string | null },
): Promise<RouteRecord> {
  assertServiceDate(input.serviceDate, 'service_date');
  await scope.em.execute('select pg_advisory_xact_lock(hashtext(?))', [`route:${scope.siteId}:${input.driverUserId}:${input.serviceDate}`]);
  const [open] = await scope.em.execute<{ id: string }[]>(
    `select id from route where site_id = ? and driver_user_id = ? and service_date = ? and phase not in ('completed', 'cancelled')
     order by created_at, id limit 1`,
    [scope.siteId, input.driverUserId, input.serviceDate],
  );
  if (open) return loadRoute(scope, open.id);
  return insertRoute(scope, { driverUserId: input.driverUserId, vehicleId: input.vehicleId, teamId: input.teamId ?? null, serviceDate: input.serviceDate });
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

/** Removes the job and its stops from its route (no-op if none). */
export async function removeJobFromRoute(scope: CommandScope, jobId: string): Promise<void> {
  const job = await loadRouteJob(scope, jobId);
  if (job.route_id) await detachJob(scope, job, { recordOn: job.route_id });
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
