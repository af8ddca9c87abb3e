import { newId } from '../../persistence/ids.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { lockDriverDay } from '../routes/route-membership.ts';
import type { RouteRecord } from '../routes/route-view.ts';

export type DriverDay = { driverUserId: string; vehicleId: string; serviceDate: string; teamId: string | null };

/** Where a dispatched job goes: a route that exists, or one to create in the same statement as the dispatch's writes. */
export type RoutePlace = { route: RouteRecord; created: boolean } | { day: DriverDay; workflowId: string; routeId: string };

/**
 * The driver's open route for the day, under the driver-day lock (`lockDriverDay`, as `openDriverDayRoute` takes
 * it, so both take turns with each other), but without creating one when there is none: the dispatch's one write
 * statement creates it, conditional on no open route existing when that statement runs (after the lock is held, so
 * it sees a route another command created while this one waited; if one appeared, that statement fails and the
 * command is retried). A new route's id is chosen here: the dispatch record names it.
 */
export async function lockDriverDayPlace(scope: CommandScope, day: DriverDay): Promise<RoutePlace> {
  const locked = await lockDriverDay(scope, day);
  if (locked.route) return { route: locked.route, created: false };
  return { day, workflowId: locked.workflowId, routeId: newId('route') };
}
