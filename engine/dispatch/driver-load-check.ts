import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { sendWithNext } from '../runtime/deferred-writes.ts';
import type { DriverFacts } from './driver-facts.ts';

/**
 * A driver at their `max_load` of open jobs (as the decision read it: the process's driver index, this
 * transaction's own dispatches included) takes no more.
 * @throws DomainError 409 DRIVER_AT_CAPACITY naming `field`
 */
export function assertDriverHasRoom(driver: Pick<DriverFacts, 'userId' | 'maxLoad' | 'load'>, field: string): void {
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
export function checkDriverLoadWithNext(scope: CommandScope, driver: Pick<DriverFacts, 'userId' | 'maxLoad'>, jobId: string): Promise<void> {
  if (driver.maxLoad === null) return Promise.resolve();
  return sendWithNext(scope.em, 'select dispatch_load_holds(?, ?, ?)', [scope.siteId, driver.userId, jobId]);
}

/** Phases in which a job counts against its driver's `max_load` (as `dispatch_load_holds` counts them). */
const OPEN_PHASES: ReadonlySet<string> = new Set(['assigned', 'in_progress']);

/**
 * A job that enters an open phase with a driver (a staff move through POST /job/state of a job created for a driver,
 * or a job created for a driver in a workflow whose first state is open) takes one of their `max_load` slots as a
 * dispatch does, so it passes the same checks: the driver's open jobs other than this one read now (409 when at the
 * limit), then again under the driver's lock with the command's next statement (`checkDriverLoadWithNext`). A move
 * between open phases, or a job without a driver, or a driver without a `max_load`, is not checked.
 * @throws DomainError 409 DRIVER_AT_CAPACITY naming driver_user_id
 */
export async function checkDriverLoadOnEntry(scope: CommandScope, job: { id: string; driverUserId?: string | null }, from: string | null, to: string): Promise<void> {
  if (!job.driverUserId || (from !== null && OPEN_PHASES.has(from)) || !OPEN_PHASES.has(to)) return;
  const [row] = await scope.em.execute<{ max_load: number | null; load: string | number }[]>(
    `select w.max_load, (select count(*) from job j where j.site_id = w.site_id and j.driver_user_id = w.user_id
       and j.phase in ('assigned', 'in_progress') and j.deleted_at is null and j.id <> ?) as load
     from worker w where w.site_id = ? and w.user_id = ?`,
    [job.id, scope.siteId, job.driverUserId],
  );
  if (!row || row.max_load === null) return;
  const driver = { userId: job.driverUserId, maxLoad: row.max_load, load: Number(row.load) };
  assertDriverHasRoom(driver, 'driver_user_id');
  await checkDriverLoadWithNext(scope, driver, job.id);
}
