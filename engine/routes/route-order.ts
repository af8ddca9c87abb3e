import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';

type OrderedStop = { id: string; job_id: string; type: string; phase: string };

/** A stop still to do: the order rules bind these only (a done or cancelled stop stays where it was, as it was). */
const isOpen = (stop: OrderedStop) => stop.phase !== 'completed' && stop.phase !== 'cancelled';

/** The stops of the route's jobs in the route's order (stops not yet placed come after the placed ones). */
export async function routeStopOrder(scope: CommandScope, routeId: string): Promise<OrderedStop[]> {
  return scope.em.execute<OrderedStop[]>(
    `select s.id, s.job_id, s.type, s.phase from job j join stop s on s.job_id = j.id
     left join route_stop rs on rs.stop_id = s.id and rs.route_id = j.route_id
     where j.route_id = ? and j.site_id = ? and j.deleted_at is null
     order by rs.position nulls last, j.created_at, j.id, s.sort_order`,
    [routeId, scope.siteId],
  );
}

/**
 * Checks a new full order of the route's stops: exactly the route's stops, each once, and for each job every open
 * pickup before every open dropoff (a parcel is collected before it is delivered; a stop done or cancelled is past
 * and binds nothing). Errors name the stop.
 * @throws DomainError 400 INVALID_STOP_ORDER (unknown, repeated or missing stop), 400 PICKUP_AFTER_DROPOFF
 */
export function checkStopOrder(current: OrderedStop[], stopIds: string[]): OrderedStop[] {
  const byId = new Map(current.map((s) => [s.id, s]));
  const seen = new Set<string>();
  const ordered = stopIds.map((id, index) => {
    const stop = byId.get(id);
    if (!stop) throw DomainError.invalid('INVALID_STOP_ORDER', `Stop ${id} is not a stop of this route's jobs`, `stop_ids.${index}`);
    if (seen.has(id)) throw DomainError.invalid('INVALID_STOP_ORDER', `Stop ${id} is listed twice`, `stop_ids.${index}`);
    seen.add(id);
    return stop;
  });
  const missing = current.find((s) => !seen.has(s.id));
  if (missing) throw DomainError.invalid('INVALID_STOP_ORDER', `Stop ${missing.id} of job ${missing.job_id} is missing: stop_ids is the route's full order`, 'stop_ids');
  const pickedUp = new Map<string, number>();
  const pickupsLeft = new Map<string, number>();
  for (const stop of ordered) if (stop.type === 'pickup' && isOpen(stop)) pickupsLeft.set(stop.job_id, (pickupsLeft.get(stop.job_id) ?? 0) + 1);
  ordered.forEach((stop, index) => {
    if (!isOpen(stop)) return;
    if (stop.type === 'pickup') pickedUp.set(stop.job_id, (pickedUp.get(stop.job_id) ?? 0) + 1);
    if (stop.type === 'dropoff' && (pickedUp.get(stop.job_id) ?? 0) < (pickupsLeft.get(stop.job_id) ?? 0)) {
      const pickup = ordered.find((s, later) => later > index && s.job_id === stop.job_id && s.type === 'pickup' && isOpen(s))!;
      throw new DomainError(
        400,
        'PICKUP_AFTER_DROPOFF',
        `Stop ${stop.id} (dropoff of job ${stop.job_id}) comes before stop ${pickup.id}, a pickup of the same job`,
        `stop_ids.${index}`,
        { stop_id: stop.id, pickup_stop_id: pickup.id, job_id: stop.job_id },
      );
    }
  });
  return ordered;
}

/** Rewrites the route's order to `ordered` (positions 1..n). */
export async function writeStopOrder(scope: CommandScope, routeId: string, ordered: OrderedStop[]): Promise<void> {
  await scope.em.execute('delete from route_stop where route_id = ? and site_id = ?', [routeId, scope.siteId]);
  if (ordered.length === 0) return;
  const values = ordered.map(() => '(?, ?, ?, ?, ?)').join(', ');
  const params = ordered.flatMap((s, index) => [s.id, scope.siteId, routeId, s.job_id, index + 1]);
  await scope.em.execute(`insert into route_stop (stop_id, site_id, route_id, job_id, position) values ${values}`, params);
}
