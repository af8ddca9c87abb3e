import { applyTransition, type CommandScope } from '../commands/apply-transition.ts';
import { isRefusedMove } from '../commands/move-refusal.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { DomainError } from '../domain-error.ts';
import { jobFromRow } from '../jobs/job-view.ts';
import { assignRouteDriver, joinRouteWithDriver, loadRoute, openDriverDayRoute, type RouteRecord } from '../routes/route-membership.ts';
import { dispatchInsert, insertDispatch, recordInsertedDispatch, recordWrittenDispatch, updateDispatch, type DispatchRow } from './dispatch-record.ts';
import type { DispatchDecision, DispatchMethod } from './dispatch-types.ts';
import type { CompletionColumn } from './dispatch-columns.ts';
import { namedDecision } from './decide.ts';
import type { DriverFacts } from './driver-facts.ts';
import { driverFacts, indexedDriverFacts, type IndexedDrivers } from './driver-index.ts';
import { planJobDispatch } from './dispatch-plan.ts';
import { dispatchAtOnce } from './dispatch-at-once.ts';
import { forgetDriverDayRoute } from './driver-day-routes.ts';
import { assertDispatchableZone, toJobTarget, type JobTarget } from './job-target.ts';
import { noteDriverBefore } from '../commands/move-records.ts';
import { assertDriverHasRoom, checkDriverLoadWithNext } from './driver-load-check.ts';

export type AssignInput = {
  jobId: string;
  driverId: string;
  vehicleId?: string | null;
  /** Join this route instead of the driver's open route of the day. */
  routeId?: string | null;
  /** The caller already gave `routeId` to this driver (a whole route's dispatch): not checked again. */
  routeTaken?: boolean;
  teamId?: string | null;
  method: DispatchMethod;
  requireConfirmation: boolean;
  /** The explanation to keep; a manual one (the driver named by the caller) when omitted. */
  decision?: DispatchDecision;
  /** Complete this pending record (a delayed dispatch, a pool offer) instead of inserting one. */
  dispatchId?: string;
  /** The record `dispatchId` names as this command last wrote it, so locked by it (a claimed pool offer): completed by the dispatch's own statement. */
  pending?: DispatchRow;
  /** The driver took the job themself (a pool claim): acceptance is recorded at once. */
  acceptedByDriver?: boolean;
  /** Read and checked earlier in this transaction (a strategy decision): not read again. */
  loaded?: Loaded;
};

/** What an assignment reads first: the job, the driver, the site's time zone and current route workflow (null: not read). */
export type Loaded = { job: JobTarget; driver: DriverFacts | undefined; timezone: string; routeWorkflowId: string | null };

export type Assigned = { dispatch: DispatchRow; route: RouteRecord; driver: DriverFacts; job: JobTarget };

/**
 * Dispatches one job to one driver inside the caller's command, so everything below commits or rolls back together:
 * 1. checks: the job is unassigned (409 JOB_NOT_UNASSIGNED), not in a banned zone without a staff override
 *    (422 ZONE_RESTRICTED), the driver is an active worker (404 / 409 DRIVER_NOT_ACTIVE) below their max_load
 *    (409 DRIVER_AT_CAPACITY; checked again under the driver's lock with the writes: `checkDriverLoadWithNext`),
 *    and a vehicle is known: the one given or the driver's default (422 VEHICLE_REQUIRED, spec rule 3);
 * 2. the job joins `routeId` or the driver's open route for the service day (created if none);
 * 3. the job gets its driver and the `dispatch` phase event through the command path (audit + `job:state_change`,
 *    stops follow by the cascade rules);
 * 4. the dispatch record: `pending` while a required confirmation is awaited, else `processing`. A manual
 *    assignment is never an acceptance (spec rule 1); other active records of the job are superseded.
 */
export async function assignJob(scope: CommandScope, input: AssignInput): Promise<Assigned> {
  const { em } = scope;
  // The job, the named driver and the site's time zone in one round trip, unless a decision read them already.
  const loaded = input.loaded ?? (await loadForAssignment(scope, input));
  const { job, driver, timezone } = loaded;
  if (job.phase !== 'unassigned') {
    throw new DomainError(409, 'JOB_NOT_UNASSIGNED', `Job ${job.id} is ${job.phase}; only unassigned jobs are dispatched (return it first)`, 'job_id');
  }
  if (!input.loaded) await assertDispatchableZone(em, job);
  if (!driver) throw new DomainError(404, 'NOT_FOUND', `Driver ${input.driverId} is not a worker of this site`, 'driver_id');
  if (!driver.active) throw new DomainError(409, 'DRIVER_NOT_ACTIVE', `Driver ${driver.userId} is not active on this site`, 'driver_id');
  assertDriverHasRoom(driver, 'driver_id');
  // A job created for a driver and dispatched to another: its event names the one it was meant for, who hears of it.
  noteDriverBefore(scope, job.id, job.driverUserId);
  const vehicleId = input.vehicleId ?? driver.defaultVehicleId;
  if (!vehicleId) {
    throw new DomainError(422, 'VEHICLE_REQUIRED', `Driver ${driver.userId} has no default vehicle: give vehicle_id`, 'vehicle_id');
  }
  if (input.vehicleId) await assertVehicle(scope, input.vehicleId);
  if (input.routeId && !input.routeTaken) await takeNamedRoute(scope, input.routeId, driver.userId, vehicleId);
  // The load read above had no lock: checked again where the writes go (drivers with a max_load only).
  await checkDriverLoadWithNext(scope, driver, job.id);

  // The record this dispatch completes (`dispatchId`) is one of the job's active ones; any other is superseded.
  const supersede = job.activeDispatches > (input.dispatchId ? 1 : 0);
  // A new record with nothing to supersede first is inserted by the join's statement (its audit and event are
  // still recorded after the moves, in the order they happen).
  const insertWithJoin = !input.dispatchId && !supersede;
  // Likewise a pending record this command holds is completed by that statement (as `updateDispatch` would after it).
  const pending = input.pending !== undefined && input.pending.id === input.dispatchId && !supersede ? input.pending : undefined;
  const now = scope.clock.now();
  const accepted = input.acceptedByDriver === true;
  // Exactly the columns a completion in the dispatch's statement writes (`satisfies`: none missing, none extra).
  const fieldsFor = (routeId: string | null) => ({
    job_id: job.id,
    route_id: routeId,
    team_id: input.teamId ?? null,
    assigned_to_driver_id: driver.userId,
    assigned_to_vehicle_id: vehicleId,
    status: input.requireConfirmation && !accepted ? ('pending' as const) : ('processing' as const),
    require_confirmation: input.requireConfirmation,
    driver_accepted: accepted,
    driver_accepted_at: accepted ? now : null,
    dispatched_at: now,
    decision: input.decision ?? namedDecision(accepted ? 'claim' : 'manual', driver, now),
  }) satisfies Record<CompletionColumn, unknown>;
  const recordFor = (routeId: string | null) => ({ ...fieldsFor(routeId), method: input.method });
  const day = { driverUserId: driver.userId, vehicleId, serviceDate: serviceDate(scope, job, timezone), teamId: input.teamId ?? null };
  // With the workflow states read with the job, the route's creation or join and every move go in one statement.
  const plan = insertWithJoin || pending ? await planJobDispatch(scope, job) : null;
  let written: { route: RouteRecord; inserted: unknown };
  if (plan) {
    written = await dispatchAtOnce(scope, plan, { routeId: input.routeId, day, driverUserId: driver.userId, routeWorkflowId: loaded.routeWorkflowId, recordFor, pending });
  } else {
    // This path does not say what it left of the driver's route: the next dispatch to the day reads it.
    if (!input.routeId) forgetDriverDayRoute(scope, day);
    const opened = input.routeId ? { route: await loadRoute(scope, input.routeId), created: false } : await openDriverDayRoute(scope, { ...day, jobIds: [job.id] });
    written = await joinAndMove(scope, opened, job, driver.userId, insertWithJoin ? dispatchInsert(scope, recordFor(opened.route.id)) : undefined);
  }
  const { route, inserted } = written;
  const fields = fieldsFor(route.id);

  if (supersede) await supersedeOthers(scope, job.id, input.dispatchId);
  let dispatch: DispatchRow | null;
  if (insertWithJoin) dispatch = recordInsertedDispatch(scope, inserted as DispatchRow);
  // Completed by the statement (no row: no longer pending), recorded as `updateDispatch` records it; `pending` is the row before.
  else if (plan && pending) dispatch = inserted ? recordWrittenDispatch(scope, 'dispatch', pending, inserted as DispatchRow) : null;
  else if (input.dispatchId) dispatch = await updateDispatch(scope, input.dispatchId, fields, "status = 'pending' and is_active", [], 'dispatch');
  else dispatch = await insertDispatch(scope, { ...fields, method: input.method });
  if (!dispatch) throw DomainError.conflict('DISPATCH_CHANGED', `Dispatch ${input.dispatchId} is no longer pending`);
  return { dispatch, route, driver, job };
}

/** The join (with the caller's insert), then the job's move with its cascades and the route's move: a statement each. */
async function joinAndMove(scope: CommandScope, opened: { route: RouteRecord; created: boolean }, job: JobTarget, driverId: string, insert: { sql: string; params: unknown[] } | undefined) {
  const { jobRow, route, inserted } = await joinRouteWithDriver(scope, opened, job, driverId, insert);
  const applied = await applyTransition(scope, 'job', job.id, { kind: 'phase', event: 'dispatch' }, {}, jobFromRow(jobRow));
  await applyCascades(scope, applied, {});
  await dispatchRoute(scope, route);
  return { route, inserted };
}

async function loadForAssignment(scope: CommandScope, input: AssignInput): Promise<Loaded> {
  return loadedFrom(await indexedDriverFacts(scope.em, scope.siteId, { jobId: input.jobId }), input.jobId, input.driverId);
}

/** What an assignment of `jobId` to `driverId` needs, from a read of the index that carried the job's rows. @throws DomainError 404 (job) */
export function loadedFrom(indexed: IndexedDrivers, jobId: string, driverId: string): Loaded {
  const driver = indexed.drivers.find((d) => d.userId === driverId);
  // The index's objects change in place as later reads apply changes: the assignment keeps its own copy.
  const copy = driver ? driverFacts(driver, driver.availability, driver.position, driver.load, driver.busy) : undefined;
  return { job: toJobTarget(indexed.jobRows, jobId), driver: copy, timezone: indexed.timezone, routeWorkflowId: indexed.routeWorkflowId };
}

/**
 * A planned route that receives a dispatched job is dispatched too (as the system: the rule, not the caller, moves
 * it); a route already further along, or a workflow without that move, is left as it is.
 */
export async function dispatchRoute(scope: CommandScope, route: RouteRecord): Promise<void> {
  if (route.phase !== 'unassigned') return;
  const system = { ...scope, actor: { ...scope.actor, role: 'system' as const } };
  try {
    // `route` is the row as this command last wrote or read it (for update): the move needs no read of its own.
    const applied = await applyTransition(system, 'route', route.id, { kind: 'phase', event: 'dispatch' }, {}, route);
    await applyCascades(system, applied, {});
  } catch (error) {
    if (!isRefusedMove(error)) throw error;
  }
}

/** Per time zone: its day formatter, and the last minute formatted with the day it fell on. */
const dayFormats = new Map<string, { format: Intl.DateTimeFormat; minute: number; day: string }>();

/**
 * The day the job is worked, on the site's calendar: its window's start, else today. Formatted once per minute and
 * time zone: a local day starts on a whole minute of UTC time in every offset in use since 1972.
 */
function serviceDate(scope: CommandScope, job: JobTarget, timezone: string): string {
  const instant = job.window?.start ?? scope.clock.now().getTime();
  const minute = Math.floor(instant / 60_000);
  let entry = dayFormats.get(timezone);
  if (!entry) {
    entry = { format: new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }), minute: Number.NaN, day: '' };
    dayFormats.set(timezone, entry);
  }
  if (entry.minute !== minute) {
    entry.day = entry.format.format(instant);
    entry.minute = minute;
  }
  return entry.day;
}

/** @throws DomainError 404 vehicle_id (not this site's), 409 VEHICLE_INACTIVE */
export async function assertVehicle(scope: CommandScope, vehicleId: string): Promise<void> {
  const [vehicle] = await scope.em.execute<{ is_active: boolean }[]>('select is_active from vehicle where id = ? and site_id = ?', [vehicleId, scope.siteId]);
  if (!vehicle) throw new DomainError(404, 'NOT_FOUND', `Vehicle ${vehicleId} not found`, 'vehicle_id');
  if (!vehicle.is_active) throw new DomainError(409, 'VEHICLE_INACTIVE', `Vehicle ${vehicleId} is not active`, 'vehicle_id');
}

/**
 * A route named for the job (`route_id`) is the driver's: one without a driver becomes theirs (with the vehicle),
 * one of another driver is refused, as the route's own update refuses a driver its jobs contradict.
 * @throws DomainError 409 DRIVER_MISMATCH naming route_id, 409 ROUTE_CLOSED, 404
 */
async function takeNamedRoute(scope: CommandScope, routeId: string, driverUserId: string, vehicleId: string): Promise<void> {
  const route = await loadRoute(scope, routeId);
  if (route.driverUserId === driverUserId) return;
  if (route.driverUserId) {
    throw new DomainError(409, 'DRIVER_MISMATCH', `Route ${routeId} is driver ${route.driverUserId}'s: dispatch the job to them, or to a route of this driver`, 'route_id');
  }
  await assignRouteDriver(scope, routeId, { driverUserId, vehicleId });
}

/** A new dispatch of a job replaces its earlier active ones (a withdrawn pool offer, a job returned by its driver). */
async function supersedeOthers(scope: CommandScope, jobId: string, keepId: string | undefined): Promise<void> {
  const rows = await scope.em.execute<{ id: string }[]>(
    "select id from dispatch where site_id = ? and job_id = ? and is_active and status <> 'completed' and id <> ?",
    [scope.siteId, jobId, keepId ?? ''],
  );
  for (const row of rows) await updateDispatch(scope, row.id, { is_active: false }, 'is_active', [], 'supersede');
}
