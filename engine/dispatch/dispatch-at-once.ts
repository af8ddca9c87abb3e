import type { CommandScope } from '../commands/apply-transition.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import { loadRoute } from '../routes/route-membership.ts';
import type { RouteRecord } from '../routes/route-view.ts';
import { dispatchToDriverDay } from './dispatch-driver-day.ts';
import { dispatchPlanned } from './dispatch-planned.ts';
import type { JobDispatchPlan } from './dispatch-plan.ts';
import { dispatchInsert, type DispatchRow, type NewDispatch } from './dispatch-record.ts';
import { dispatchCompletion } from './dispatch-completion.ts';
import { writeDispatchAtOnce } from './dispatch-write.ts';
import type { DriverDay, RoutePlace } from './driver-day-route.ts';
import { rememberDriverDayRoute } from './driver-day-routes.ts';

export type AtOnceInput = {
  /** Join this route instead of the driver's open route of the day. */
  routeId?: string | null;
  day: DriverDay;
  driverUserId: string;
  /** The site's current route workflow as the decision read it (a route the dispatch creates starts in it). */
  routeWorkflowId: string | null;
  /** The caller's dispatch record for the route the job goes to (null: the statement names the route itself). */
  recordFor(routeId: string | null): NewDispatch;
  /** The pending record to complete with `recordFor`'s fields instead of inserting one (a claimed pool offer: as this command last wrote it, locked). */
  pending?: DispatchRow | undefined;
};

/**
 * A planned dispatch (`planJobDispatch`) in as few round trips as the route allows: none of its own when this
 * process remembers the driver's day (`dispatchPlanned`: the write goes out with the command's next statement);
 * else one (the driver-day lock and the statement that creates or joins the driver's route and writes everything
 * else, `dispatchToDriverDay`), unless the driver's route is still unassigned (its own move is planned from the row
 * that statement read) or a route is named; then one more, `writeDispatchAtOnce`. The route written to the driver's
 * day is remembered once the command commits.
 */
export async function dispatchAtOnce(scope: CommandScope, plan: JobDispatchPlan, input: AtOnceInput): Promise<{ jobRow: EntityRow; route: RouteRecord; inserted: unknown }> {
  let place: RoutePlace;
  if (input.routeId) {
    place = { route: await loadRoute(scope, input.routeId), created: false };
  } else {
    const planned = await dispatchPlanned(scope, plan, input);
    if (planned) return planned;
    const written = await dispatchToDriverDay(scope, plan, { day: input.day, driverUserId: input.driverUserId, routeWorkflowId: input.routeWorkflowId, dispatch: input.recordFor(null), pending: input.pending });
    if (!('place' in written)) {
      rememberDriverDayRoute(scope, input.day, written.route);
      return written;
    }
    place = written.place;
  }
  const routeId = 'route' in place ? place.route.id : place.routeId;
  const record = input.pending ? dispatchCompletion(scope, input.pending, input.recordFor(routeId)) : dispatchInsert(scope, input.recordFor(routeId));
  const written = await writeDispatchAtOnce(scope, plan, place, input.driverUserId, record);
  if (!input.routeId) rememberDriverDayRoute(scope, input.day, written.route);
  return written;
}
