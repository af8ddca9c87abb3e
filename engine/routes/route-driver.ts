import { applyTransition, type CommandScope } from '../commands/apply-transition.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { DomainError } from '../domain-error.ts';
import { findRoute } from './route-records.ts';
import type { RouteRecord } from './route-view.ts';

/**
 * The driver's own route, read in the command's transaction (a route handed to another driver meanwhile cannot be
 * moved by the former one). Another driver's route is 404, as on every route read.
 */
async function ownRoute(scope: CommandScope, routeId: string): Promise<RouteRecord> {
  const route = await findRoute(scope, routeId);
  if (!route || route.driverUserId === null || route.driverUserId !== scope.actor.userId) {
    throw new DomainError(404, 'NOT_FOUND', `Route ${routeId} not found`, 'route_id');
  }
  return route;
}

/** The driver sets out on their route (the route workflow decides from which states: 409 INVALID_TRANSITION otherwise). */
export async function startOwnRoute(scope: CommandScope, routeId: string): Promise<void> {
  const route = await ownRoute(scope, routeId);
  const applied = await applyTransition(scope, 'route', routeId, { kind: 'phase', event: 'start' }, {}, route);
  await applyCascades(scope, applied, {});
}

/**
 * The driver closes their route. Refused while any of its jobs is open: finishing the jobs completes the route by
 * itself (the cascade), so this is for a route whose jobs all left or ended while it was not yet in progress.
 * @throws DomainError 404, 409 ROUTE_HAS_OPEN_JOBS (the open job ids in details), 409 INVALID_TRANSITION
 */
export async function completeOwnRoute(scope: CommandScope, routeId: string): Promise<void> {
  const route = await ownRoute(scope, routeId);
  const open = await scope.em.execute<{ id: string }[]>(
    `select id from job where route_id = ? and site_id = ? and deleted_at is null and phase not in ('completed', 'cancelled') order by created_at, id`,
    [routeId, scope.siteId],
  );
  if (open.length > 0) {
    const ids = open.map((j) => j.id);
    throw new DomainError(409, 'ROUTE_HAS_OPEN_JOBS', `Route ${routeId} still has open jobs: ${ids.join(', ')}`, 'route_id', { open_job_ids: ids });
  }
  const applied = await applyTransition(scope, 'route', routeId, { kind: 'phase', event: 'complete' }, {}, route);
  await applyCascades(scope, applied, {});
}
