import { OptimisticLockError } from '@mikro-orm/core';
import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { findRoute, syncTouchedVersion, writeRouteChange } from './route-records.ts';
import { TERMINAL_PHASES } from './route-view.ts';

/** What the membership rules read of a job. */
export type RouteJobRow = { id: string; route_id: string | null; phase: string; version: number; driver_user_id: string | null };

/** A job of the scope's site (not deleted), or 404 naming `field`. */
export async function loadRouteJob(scope: CommandScope, jobId: string, field = 'job_id'): Promise<RouteJobRow> {
  const [job] = await scope.em.execute<RouteJobRow[]>(
    'select id, route_id, phase, version, driver_user_id from job where id = ? and site_id = ? and deleted_at is null',
    [jobId, scope.siteId],
  );
  if (!job) throw new DomainError(404, 'NOT_FOUND', `Job ${jobId} not found`, field);
  return job;
}

/** Refuses to move a completed or cancelled job in or out of a route. */
export function assertJobOpen(job: RouteJobRow, field: string): void {
  if (TERMINAL_PHASES.has(job.phase)) throw new DomainError(409, 'JOB_CLOSED', `Job ${job.id} is ${job.phase}; it cannot move between routes`, field);
}

/**
 * Puts the job on `routeId` (its stops appended to the order, `job.route_id` set under the job's version check).
 * A job on another route leaves it first, and that route records the change. The target route's own change record
 * is the caller's (one per command).
 */
export async function attachJob(scope: CommandScope, routeId: string, job: RouteJobRow): Promise<void> {
  if (job.route_id === routeId) return;
  if (job.route_id) await detachJob(scope, job, { recordOn: job.route_id });
  await scope.em.execute(
    `insert into route_stop (stop_id, site_id, route_id, job_id, position)
     select s.id, s.site_id, ?, s.job_id,
            coalesce((select max(position) from route_stop where route_id = ?), 0) + row_number() over (order by s.sort_order, s.id)
     from stop s where s.job_id = ? and s.site_id = ?`,
    [routeId, routeId, job.id, scope.siteId],
  );
  await setJobRoute(scope, job, routeId);
}

/**
 * Takes the job and its stops off its route. With `recordOn`, that route records it (version, audit,
 * `route:update`); without, the caller records it.
 */
export async function detachJob(scope: CommandScope, job: RouteJobRow, options: { recordOn?: string } = {}): Promise<void> {
  if (!job.route_id) return;
  await scope.em.execute('delete from route_stop where job_id = ? and site_id = ?', [job.id, scope.siteId]);
  await setJobRoute(scope, job, null);
  const route = options.recordOn ? await findRoute(scope, options.recordOn) : null;
  if (route) await writeRouteChange(scope, route, {}, 'remove_job', { after: { removed_job_id: job.id } });
}

/** `job.route_id` under the job's optimistic version check; a race makes the engine retry the command. */
async function setJobRoute(scope: CommandScope, job: RouteJobRow, routeId: string | null): Promise<void> {
  const rows = await scope.em.execute<{ version: number }[]>(
    'update job set route_id = ?, version = version + 1, updated_at = ? where id = ? and site_id = ? and version = ? returning version',
    [routeId, new Date(), job.id, scope.siteId, job.version],
  );
  if (!rows[0]) throw OptimisticLockError.lockFailed('Job');
  job.version = Number(rows[0].version);
  job.route_id = routeId;
  syncTouchedVersion(scope, job.id, job.version);
}
