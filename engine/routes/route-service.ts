import { TeamSchema } from '../../persistence/entities/team.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { VehicleSchema } from '../../persistence/entities/vehicle.entity.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { assertJobOpen, attachJob, detachJob, loadRouteJob, type RouteJobRow } from './route-jobs.ts';
import { checkStopOrder, routeStopOrder, writeStopOrder } from './route-order.ts';
import { assertRouteOpen, findRoute, insertRoute, writeRouteChange, type RouteColumns } from './route-records.ts';
import type { RouteRecord } from './route-view.ts';

export type CreateRouteInput = {
  name?: string;
  service_date: string;
  driver_user_id?: string | null;
  vehicle_id?: string | null;
  team_id?: string | null;
  job_ids?: string[];
};

export type UpdateRouteInput = {
  id: string;
  version?: number;
  name?: string;
  service_date?: string;
  driver_user_id?: string | null;
  vehicle_id?: string | null;
  team_id?: string | null;
  stop_ids?: string[];
  add_job_ids?: string[];
  remove_job_ids?: string[];
};

/**
 * Creates a planned route, with its first jobs in the order given (a job on another route moves here).
 * @throws DomainError 400/404 naming the field, 409 JOB_CLOSED / DRIVER_MISMATCH naming the job's place in job_ids
 */
export async function createRoute(scope: CommandScope, input: CreateRouteInput): Promise<RouteRecord> {
  assertServiceDate(input.service_date, 'service_date');
  await assertReferences(scope, input);
  const driver = input.driver_user_id ?? null;
  const jobs = await joiningJobs(scope, input.job_ids ?? [], 'job_ids', driver, null);
  const route = await insertRoute(scope, {
    name: input.name,
    serviceDate: input.service_date,
    driverUserId: driver,
    vehicleId: input.vehicle_id ?? null,
    teamId: input.team_id ?? null,
    jobIds: jobs.map((j) => j.id),
  });
  for (const job of jobs) await attachJob(scope, route.id, job);
  return route;
}

/**
 * Three-state edit (a value sets, null clears, absent keeps) of a route that is not finished: its fields, jobs
 * leaving (`remove_job_ids`) then joining (`add_job_ids`, appended in that order), then the full stop order
 * (`stop_ids`, pickups before dropoffs of each job). One new version, one audit record with the jobs and stop
 * order before and after.
 * @throws DomainError 404, 409 ROUTE_CLOSED / VERSION_CONFLICT / JOB_CLOSED / JOB_NOT_ON_ROUTE / DRIVER_MISMATCH,
 *   400 INVALID_STOP_ORDER / PICKUP_AFTER_DROPOFF naming the stop
 */
export async function updateRoute(scope: CommandScope, input: UpdateRouteInput): Promise<RouteRecord> {
  const route = await findRoute(scope, input.id);
  if (!route) throw new DomainError(404, 'NOT_FOUND', `Route ${input.id} not found`, 'id');
  if (input.version !== undefined && input.version !== route.version) {
    throw new DomainError(409, 'VERSION_CONFLICT', `Route ${route.id} is at version ${route.version}, not ${input.version}; reload it`, 'version');
  }
  assertRouteOpen(route);
  if (input.service_date !== undefined) assertServiceDate(input.service_date, 'service_date');
  await assertReferences(scope, input);
  const twice = (input.add_job_ids ?? []).findIndex((id) => input.remove_job_ids?.includes(id));
  if (twice >= 0) throw DomainError.invalid('INVALID_JOB_MOVE', `Job ${input.add_job_ids![twice]} cannot both join and leave the route`, `add_job_ids.${twice}`);
  const driver = input.driver_user_id === undefined ? route.driverUserId : input.driver_user_id;
  const before = await routeContents(scope, route.id);
  const leaving = await leavingJobs(scope, route, input.remove_job_ids ?? []);
  const joining = await joiningJobs(scope, input.add_job_ids ?? [], 'add_job_ids', driver, route.id);
  for (const job of leaving) await detachJob(scope, job);
  for (const job of joining) await attachJob(scope, route.id, job);
  if (driver !== route.driverUserId) await assertJobsFollowDriver(scope, route.id, driver);
  if (input.stop_ids) await writeStopOrder(scope, route.id, checkStopOrder(await routeStopOrder(scope, route.id), input.stop_ids));
  const columns: RouteColumns = {};
  for (const key of ['name', 'service_date', 'driver_user_id', 'vehicle_id', 'team_id'] as const) {
    if (input[key] !== undefined) columns[key] = input[key];
  }
  return writeRouteChange(scope, route, columns, 'update', { before, after: await routeContents(scope, route.id) });
}

/** The route's jobs and stop order, as its audit records show them. */
async function routeContents(scope: CommandScope, routeId: string): Promise<{ job_ids: string[]; stop_ids: string[] }> {
  const stops = await routeStopOrder(scope, routeId);
  const jobs = await scope.em.execute<{ id: string }[]>('select id from job where route_id = ? and site_id = ? and deleted_at is null', [routeId, scope.siteId]);
  const ordered = [...new Set(stops.map((s) => s.job_id))];
  return { job_ids: [...ordered, ...jobs.map((j) => j.id).filter((id) => !ordered.includes(id))], stop_ids: stops.map((s) => s.id) };
}

/** Jobs that may join a route: known, open, listed once, and not assigned to another driver than the route's. */
async function joiningJobs(scope: CommandScope, ids: string[], field: string, driver: string | null, routeId: string | null): Promise<RouteJobRow[]> {
  const jobs: RouteJobRow[] = [];
  for (const [index, id] of ids.entries()) {
    const at = `${field}.${index}`;
    if (ids.indexOf(id) !== index) throw DomainError.invalid('DUPLICATE_JOB', `Job ${id} is listed twice`, at);
    const job = await loadRouteJob(scope, id, at);
    if (job.route_id !== null && job.route_id === routeId) continue;
    assertJobOpen(job, at);
    if (job.driver_user_id !== null && job.driver_user_id !== driver) {
      throw new DomainError(409, 'DRIVER_MISMATCH', `Job ${id} is assigned to driver ${job.driver_user_id}, not to this route's driver`, at);
    }
    jobs.push(job);
  }
  return jobs;
}

async function leavingJobs(scope: CommandScope, route: RouteRecord, ids: string[]): Promise<RouteJobRow[]> {
  const jobs: RouteJobRow[] = [];
  for (const [index, id] of ids.entries()) {
    const at = `remove_job_ids.${index}`;
    const job = await loadRouteJob(scope, id, at);
    if (job.route_id !== route.id) throw new DomainError(409, 'JOB_NOT_ON_ROUTE', `Job ${id} is not on route ${route.id}`, at);
    assertJobOpen(job, at);
    if (!jobs.some((j) => j.id === id)) jobs.push(job);
  }
  return jobs;
}

/**
 * A route's new driver must not contradict its open jobs already assigned to someone else. `dispatched` counts only
 * jobs given to that driver (a route dispatch hands over the jobs merely meant for someone, still unassigned).
 */
export async function assertJobsFollowDriver(scope: CommandScope, routeId: string, driver: string | null, field = 'driver_user_id', jobs: 'open' | 'dispatched' = 'open'): Promise<void> {
  const phases = jobs === 'open' ? "('completed', 'cancelled')" : "('completed', 'cancelled', 'unassigned')";
  const [other] = await scope.em.execute<{ id: string; driver_user_id: string }[]>(
    `select id, driver_user_id from job where route_id = ? and site_id = ? and deleted_at is null
     and phase not in ${phases} and driver_user_id is not null and driver_user_id is distinct from ? limit 1`,
    [routeId, scope.siteId, driver],
  );
  if (other) {
    throw new DomainError(409, 'DRIVER_MISMATCH', `Job ${other.id} of this route is assigned to driver ${other.driver_user_id}; return it first to change the route's driver`, field);
  }
}

async function assertReferences(scope: CommandScope, input: { driver_user_id?: string | null; vehicle_id?: string | null; team_id?: string | null }): Promise<void> {
  const { em } = scope;
  if (input.driver_user_id && !(await em.findOne(UserProfileSchema, { userId: input.driver_user_id, role: 'driver', isActive: true }))) {
    throw new DomainError(404, 'NOT_FOUND', `Driver ${input.driver_user_id} not found`, 'driver_user_id');
  }
  if (input.vehicle_id && !(await em.findOne(VehicleSchema, { id: input.vehicle_id, isActive: true }))) {
    throw new DomainError(404, 'NOT_FOUND', `Vehicle ${input.vehicle_id} not found`, 'vehicle_id');
  }
  if (input.team_id && !(await em.findOne(TeamSchema, { id: input.team_id }))) {
    throw new DomainError(404, 'NOT_FOUND', `Team ${input.team_id} not found`, 'team_id');
  }
}

/** A real calendar day as `YYYY-MM-DD` (the schema checks the shape; this refuses 2026-02-30). */
export function assertServiceDate(value: string, field: string): void {
  const parsed = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : null;
  if (!parsed || Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) {
    throw DomainError.invalid('INVALID_SERVICE_DATE', `${value} is not a calendar date (YYYY-MM-DD)`, field);
  }
}
