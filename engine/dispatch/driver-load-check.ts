import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { sendWithNext } from '../runtime/deferred-writes.ts';
import type { DriverFacts } from './driver-facts.ts';

/**
 * A driver at their `max_load` of open jobs (as the decision read it: the process's driver index, this
 * transaction's own dispatches included) takes no more.
 * @throws DomainError 409 DRIVER_AT_CAPACITY naming `field`
 */
export function assertDriverHasRoom(driver: DriverFacts, field: string): void {
  if (driver.maxLoad !== null && driver.load >= driver.maxLoad) {
    throw new DomainError(409, 'DRIVER_AT_CAPACITY', `Driver ${driver.userId} has ${driver.load} open jobs, their limit (max_load ${driver.maxLoad})`, field);
  }
}

/**
 * The same limit checked where the dispatch of `jobId` writes, for a driver with a `max_load` only: the load the
 * decision read was taken without a lock, so two dispatches to the driver (any process, any day) could both see room.
 * `dispatch_load_holds` (migration 0048) takes the driver's lock and counts their open jobs in the transaction; it
 * goes out with the command's next statement (no round trip of its own), so queue it before the dispatch's writes
 * (its lock then comes before the driver-day lock, in the same order in every transaction). Over the limit it
 * raises `DP001` and the engine runs the command again on fresh reads, where `assertDriverHasRoom` or the
 * strategy's `capacity` exclusion sees the driver full. A driver without a `max_load` costs nothing.
 */
export function checkDriverLoadWithNext(scope: CommandScope, driver: DriverFacts, jobId: string): Promise<void> {
  if (driver.maxLoad === null) return Promise.resolve();
  return sendWithNext(scope.em, 'select dispatch_load_holds(?, ?, ?)', [scope.siteId, driver.userId, jobId]);
}
