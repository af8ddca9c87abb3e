import type { CommandScope } from '../commands/apply-transition.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import { loadRoute } from '../routes/route-membership.ts';
import type { RouteRecord } from '../routes/route-view.ts';
import { JOINED_ROUTE_ID, joinKnownRoute, knowsDriverDay, rememberDriverDay } from './dispatch-join-known.ts';
import type { JobDispatchPlan } from './dispatch-plan.ts';
import { writeDispatchAtOnce } from './dispatch-write.ts';
import { lockDriverDayPlace, type DriverDay } from './driver-day-route.ts';

export type AtOnceInput = {
  /** Join this route instead of the driver's open route of the day. */
  routeId?: string | null;
  day: DriverDay;
  driverUserId: string;
  /** The caller's dispatch record insert, naming the route by id or by an SQL expression of the statement. */
  insertFor(routeId: string | null, routeFrom?: string): { sql: string; params: unknown[] };
};

/**
 * A planned dispatch (`planJobDispatch`) in as few round trips as the route allows: one statement when this
 * process has dispatched to the driver's day before and the route is past its own dispatch move (the common case
 * after a driver's first job of the day); otherwise the driver-day lock and read, then one statement that creates
 * or joins the route and writes everything else.
 */
export async function dispatchAtOnce(scope: CommandScope, plan: JobDispatchPlan, input: AtOnceInput): Promise<{ jobRow: EntityRow; route: RouteRecord; inserted: unknown }> {
  if (!input.routeId && knowsDriverDay(scope.siteId, input.day)) {
    const joined = await joinKnownRoute(scope, plan, input.day, input.driverUserId, input.insertFor(null, JOINED_ROUTE_ID));
    if (joined) return joined;
  }
  const place = input.routeId ? { route: await loadRoute(scope, input.routeId), created: false } : await lockDriverDayPlace(scope, input.day);
  const written = await writeDispatchAtOnce(scope, plan, place, input.driverUserId, input.insertFor('route' in place ? place.route.id : place.routeId));
  if (!input.routeId) rememberDriverDay(scope.siteId, input.day);
  return written;
}
