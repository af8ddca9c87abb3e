import { openDispatchesBeforeMove, routeBeforeMove, type Applied, type CommandScope, type EntityKind, type TransitionRequest } from '../commands/apply-transition.ts';
import { knownRoute } from '../commands/move-reads.ts';
import { updateDispatch } from '../dispatch/dispatch-record.ts';
import { sendWithNext } from '../runtime/deferred-writes.ts';
import type { JobRecord } from '../jobs/job-view.ts';
import { removeJobFromRoute } from './route-membership.ts';
import { findRoute, writeRouteChange } from './route-records.ts';
import { routeFromRow, TERMINAL_PHASES, type RouteRecord } from './route-view.ts';

/** A rule's move with its own cascades, or null when the site's workflow does not allow it (the rule then does not apply). */
export type CascadeMove = (scope: CommandScope, kind: EntityKind, id: string, request: TransitionRequest) => Promise<Applied | null>;

/**
 * A job's move, seen from its route (DESIGN §2): a returned job has left its route in the transition's own write,
 * so its stops leave the route's order; a job that became terminal, or left, may have been the route's last open
 * job, and then the route completes (or is cancelled when none of its jobs was completed).
 */
export async function afterJobMove(scope: CommandScope, applied: Applied, move: CascadeMove): Promise<void> {
  const job = applied.entity as JobRecord;
  let routeId = job.routeId;
  if (applied.to.phase === 'unassigned' && applied.from.phase !== 'unassigned') {
    // The dispatch that gave it to its driver ends with the return: left active, it held the job (one active dispatch
    // per job) against every later pool offer, bulk distribution and auto dispatch.
    for (const id of openDispatchesBeforeMove(applied)) await updateDispatch(scope, id, { is_active: false }, 'is_active', [], 'return');
    // A job that was on no route has no route stops (they are written and removed with `job.route_id`): nothing to
    // take off, no route to complete, and no statement to send for it.
    if (routeBeforeMove(applied) === null) return;
    const left = await scope.em.execute<{ route_id: string }[]>('delete from route_stop where job_id = ? and site_id = ? returning route_id', [job.id, scope.siteId]);
    const route = left[0] ? await findRoute(scope, left[0].route_id) : null;
    if (!route) return;
    await writeRouteChange(scope, route, {}, 'remove_job', { after: { removed_job_id: job.id } });
    routeId = route.id;
  } else if (!(TERMINAL_PHASES.has(applied.to.phase) && !TERMINAL_PHASES.has(applied.from.phase))) {
    return;
  }
  if (routeId) await completeWhenJobsDone(scope, applied, routeId, move);
}

/**
 * A route's move, seen from its jobs and driver: started, it becomes its driver's active route; finished, it stops
 * being that; cancelled, its open jobs are released (returned to unassigned when the job workflow allows it, and
 * off the route either way).
 */
export async function afterRouteMove(scope: CommandScope, applied: Applied, move: CascadeMove): Promise<void> {
  const route = applied.entity as RouteRecord;
  // Nothing reads these writes' results: they go out with the command's next statement when they can.
  if (route.driverUserId && applied.to.phase === 'in_progress') {
    await write(scope, 'update driver_state set active_route_id = ? where site_id = ? and user_id = ?', [route.id, scope.siteId, route.driverUserId]);
  }
  if (route.driverUserId && TERMINAL_PHASES.has(applied.to.phase)) {
    await write(scope, 'update driver_state set active_route_id = null where site_id = ? and user_id = ? and active_route_id = ?', [
      scope.siteId,
      route.driverUserId,
      route.id,
    ]);
  }
  if (applied.to.phase !== 'cancelled' || applied.from.phase === 'cancelled') return;
  const open = await scope.em.execute<{ id: string; phase: string }[]>(
    `select id, phase from job where route_id = ? and site_id = ? and deleted_at is null and phase not in ('completed', 'cancelled') order by created_at, id`,
    [route.id, scope.siteId],
  );
  for (const job of open) {
    if (job.phase !== 'unassigned') await move(scope, 'job', job.id, { kind: 'phase', event: 'return' });
    await removeJobFromRoute(scope, job.id);
  }
}

/**
 * A job taken off its route without a move of its own (an unassigned job deleted): the route records it (version,
 * audit, `route:update`) as it records a returned job, and completes, or is cancelled, when every job left on it has
 * ended: that job may have been the last one holding it open.
 */
export async function afterJobLeavesRoute(scope: CommandScope, jobId: string, move: CascadeMove): Promise<void> {
  const routeId = await removeJobFromRoute(scope, jobId);
  if (routeId) await completeWhenJobsDone(scope, null, routeId, move);
}

const write = (scope: CommandScope, sql: string, params: unknown[]): Promise<void> => sendWithNext(scope.em, sql, params);

async function completeWhenJobsDone(scope: CommandScope, applied: Applied | null, routeId: string, move: CascadeMove): Promise<void> {
  // The stop move's reads tell the route and its jobs' phases; otherwise they are read.
  const known = applied ? knownRoute(scope, applied, routeId) : undefined;
  const route = known ? routeFromRow(known.route) : await findRoute(scope, routeId);
  if (!route || TERMINAL_PHASES.has(route.phase)) return;
  const phases = await jobPhasesAfter(scope, routeId, known?.phases);
  if (phases.length === 0 || !phases.every((phase) => TERMINAL_PHASES.has(phase))) return;
  const anyDone = phases.includes('completed');
  if (anyDone && route.phase !== 'in_progress') await move(scope, 'route', routeId, { kind: 'phase', event: 'start' });
  await move(scope, 'route', routeId, { kind: 'phase', event: anyDone ? 'complete' : 'cancel' });
}

/**
 * The phases of the route's jobs after this command's job move. Phases that leave another job open are not trusted
 * as they are: a driver finishing that job at the same moment read this one open as well (READ COMMITTED), and the
 * route would stay open for good. So such moves take turns (a transaction-level advisory lock on the route, not its
 * row's lock, which route-wide commands take before their jobs') and look at the phases again once the lock is held:
 * of two such moves the second sees the first's job (the lock's key is `route_jobs_turn_key`, migration 0035, which
 * both ways below take). When the stop move's reads tell the phases, that look is `route_jobs_left_open` (migration
 * 0034), queued with the command's next statement: it fails the command, which runs again on reads, if every job
 * ended meanwhile. Otherwise the phases are read under the lock.
 */
async function jobPhasesAfter(scope: CommandScope, routeId: string, known: string[] | undefined): Promise<string[]> {
  if (known && known.length > 0 && known.every((phase) => TERMINAL_PHASES.has(phase))) return known;
  if (known && known.length > 0) {
    await sendWithNext(scope.em, 'select route_jobs_left_open(?, ?)', [routeId, scope.siteId]);
    return known;
  }
  await sendWithNext(scope.em, 'select pg_advisory_xact_lock(route_jobs_turn_key(?, ?))', [routeId, scope.siteId]);
  const rows = await scope.em.execute<{ phase: string }[]>('select phase from job where route_id = ? and site_id = ? and deleted_at is null', [routeId, scope.siteId]);
  return rows.map((row) => row.phase);
}
