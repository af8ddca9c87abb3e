import { applyTransition, type CommandScope } from '../commands/apply-transition.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { DomainError } from '../domain-error.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { findRoute } from './route-records.ts';

/**
 * Staff move a route through its workflow (`POST /route/state`), within what keeps it and its jobs agreeing:
 * - cancelled: always (its open jobs are released: the cascade);
 * - completed: only without open jobs (finishing them completes it by itself);
 * - back to planned: only while none of its jobs is dispatched (they would sit on a route that cannot start);
 * - dispatched: not here: `POST /dispatch/route` gives a route and its jobs to a driver together.
 * The workflow's roles decide the rest (409 INVALID_TRANSITION).
 * @throws DomainError 404, 400 UNKNOWN_STATE_ID, 409 ROUTE_HAS_OPEN_JOBS / ROUTE_HAS_DISPATCHED_JOBS / DISPATCH_THE_ROUTE
 */
export async function moveRouteByStaff(scope: CommandScope, routeId: string, toStateId: string, notes: { cancellationNotes?: string }): Promise<void> {
  const route = await findRoute(scope, routeId);
  if (!route) throw new DomainError(404, 'NOT_FOUND', `Route ${routeId} not found`, 'route_id');
  const target = (await workflowById(scope.em, route.workflowId)).states.find((s) => s.id === toStateId);
  if (target?.phase === 'assigned') {
    throw DomainError.conflict('DISPATCH_THE_ROUTE', 'A route is dispatched with POST /dispatch/route, which gives its jobs to the driver too');
  }
  if (target?.phase === 'completed' || target?.phase === 'unassigned') {
    const past = target.phase === 'completed' ? "('completed', 'cancelled')" : "('completed', 'cancelled', 'unassigned')";
    const jobs = await scope.em.execute<{ id: string }[]>(
      `select id from job where route_id = ? and site_id = ? and deleted_at is null and phase not in ${past} order by created_at, id`,
      [routeId, scope.siteId],
    );
    if (jobs.length > 0) {
      const ids = jobs.map((j) => j.id);
      const [code, why] = target.phase === 'completed' ? ['ROUTE_HAS_OPEN_JOBS', 'still has open jobs'] : ['ROUTE_HAS_DISPATCHED_JOBS', 'has dispatched jobs (return them first)'];
      throw new DomainError(409, code, `Route ${routeId} ${why}: ${ids.join(', ')}`, 'workflow_state_id', { job_ids: ids });
    }
  }
  const applied = await applyTransition(scope, 'route', routeId, { kind: 'move', toStateId }, notes, route);
  await applyCascades(scope, applied, notes);
}
