import type { EntityManager } from '@mikro-orm/postgresql';
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { ZoneSchema } from '../../persistence/entities/zone.entity.ts';
import type { MappingProvider } from '../mapping/mapping-provider.ts';
import { DECISION_LIST_LIMIT, exclude, noExcludedDrivers, type DispatchDecision, type Strategy } from './dispatch-types.ts';
import { busyWindows, type DriverFacts } from './driver-facts.ts';
import { driverFacts, indexedDriverFacts, type IndexedDrivers } from './driver-index.ts';
import { shortlist } from './driver-index-shortlist.ts';
import { exclusionReason, legsTo, type EligibilityOptions } from './evaluate.ts';
import type { JobTarget } from './job-target.ts';
import { rankDrivers, TIE_RULES, toCandidateScores, type Ranked } from './select-driver.ts';

export type DecisionInput = {
  job: JobTarget;
  strategy: Strategy;
  /** Only this team's drivers; all the site's workers otherwise. */
  teamId?: string;
  now: Date;
  mapping: MappingProvider;
  /** The request gives no vehicle: drivers without a default vehicle cannot be chosen. */
  requireVehicle: boolean;
  /** Open jobs the winner takes at once (a whole route's unassigned jobs): see {@link roomAsked}. 1 when absent. */
  jobCount?: number;
  /** The drivers already read in this transaction (with the job, see `indexedDriverFacts`); read here when absent. */
  indexed?: IndexedDrivers;
};

/** `timezone`: the site's, read with the drivers (the caller's service day is on its calendar). */
export type Decision = { decision: DispatchDecision; winner: DriverFacts | null; cursorKey: string; timezone: string };

/**
 * Picks the driver for a job: takes the drivers from the site's in-memory index (kept exact by one statement that
 * reads what changed since the previous decision, see driver-index.ts; busy windows read when the job has a
 * window), leaves out the ineligible ones with their reason, measures a shortlist (the nearest by great-circle
 * distance, see `shortlist`) to the first stop through the mapping provider, and ranks them by the strategy.
 * Round-robin reads its cursor `for update`, so concurrent decisions in the same scope queue behind each other
 * until the caller's transaction ends; the caller advances it with {@link advanceCursor}.
 */
export async function decide(em: EntityManager, siteId: string, input: DecisionInput): Promise<Decision> {
  const { job, strategy } = input;
  const cursorKey = input.teamId ? `team:${input.teamId}` : 'site';
  const [indexed, cursor, pickupZoneIds] = await Promise.all([
    input.indexed ?? indexedDriverFacts(em, siteId, { teamId: input.teamId }),
    strategy === 'round-robin' ? lockCursor(em, siteId, cursorKey) : Promise.resolve(null),
    strategy === 'zone-based' ? serviceZonesAt(em, job) : Promise.resolve(undefined),
  ]);
  const drivers = job.window !== null && indexed.drivers.length > 0 ? await withBusyWindows(em, siteId, indexed.drivers, job.id) : indexed.drivers;
  const options: EligibilityOptions = {
    at: new Date(job.window?.start ?? input.now.getTime()), timezone: indexed.timezone, job, considerSchedule: true, considerConflicts: true,
    requireAvailable: true, pickupZoneIds, requireVehicle: input.requireVehicle,
  };
  options.jobCount = roomAsked(drivers, options, input.jobCount ?? 1);
  const decided = await rankAndRecord(drivers, options, input, cursor, cursorKey);
  // The index's objects change in place as later decisions read changes: the caller gets its own copy.
  const winner = decided.winner;
  return { ...decided, winner: winner ? driverFacts(winner, winner.availability, winner.position, winner.load, winner.busy) : null, timezone: indexed.timezone };
}

/**
 * The room under `max_load` a decision asks of its winner when it takes `wanted` jobs at once (a whole route): room for
 * all of them when a driver eligible for one job has it (a driver without a `max_load` always has), else the most room
 * such a driver has, so the route goes to whoever can take the most of it (the jobs past their limit are then the
 * dispatch's `failed_jobs`, DRIVER_AT_CAPACITY). `wanted` when nobody is eligible even for one: the decision then
 * reports everyone excluded.
 */
function roomAsked(drivers: DriverFacts[], options: EligibilityOptions, wanted: number): number {
  if (wanted <= 1) return wanted;
  const forOne = { ...options, jobCount: 1 };
  let most = 0;
  for (const driver of drivers) {
    if (exclusionReason(driver, forOne) !== null) continue;
    const room = driver.maxLoad === null ? wanted : driver.maxLoad - driver.load;
    if (room >= wanted) return wanted;
    most = Math.max(most, room);
  }
  return most > 0 ? most : wanted;
}

/** The drivers with their open jobs' windows (copies of those who have any: the index's objects stay as they are). */
async function withBusyWindows(em: EntityManager, siteId: string, drivers: DriverFacts[], jobId: string): Promise<DriverFacts[]> {
  const windows = await busyWindows(em, siteId, jobId);
  if (windows.size === 0) return drivers;
  return drivers.map((d) => {
    const busy = windows.get(d.userId);
    return busy ? driverFacts(d, d.availability, d.position, d.load, busy) : d;
  });
}

async function rankAndRecord(drivers: DriverFacts[], options: EligibilityOptions, input: DecisionInput, cursor: string | null, cursorKey: string): Promise<Omit<Decision, 'timezone'>> {
  const { strategy, now } = input;
  // `drivers` itself until the first exclusion: with every driver eligible (the usual team) no array is grown
  // driver by driver (three times the fleet's size in pointers, per decision).
  let eligible = drivers;
  const excluded = noExcludedDrivers();
  for (let i = 0; i < drivers.length; i++) {
    const driver = drivers[i]!;
    const reason = exclusionReason(driver, options);
    if (!reason) {
      if (eligible !== drivers) eligible.push(driver);
      continue;
    }
    if (eligible === drivers) eligible = drivers.slice(0, i);
    exclude(excluded, driver, reason);
  }
  // Round-robin does not rank by distance: no need to measure.
  const measured = shortlist(strategy, eligible, input.job.pickup).map((i) => eligible[i]!);
  const legs = strategy === 'round-robin' ? measured.map(() => null) : await legsTo(input.mapping, measured, input.job.pickup);
  const ranked = rankDrivers(strategy, measured.map<Ranked>((facts, i) => ({ facts, leg: legs[i] ?? null })), cursor);
  const winner = ranked[0]?.facts ?? null;
  return {
    winner,
    cursorKey,
    decision: {
      strategy,
      tie_rule: TIE_RULES[strategy],
      decided_at: now.toISOString(),
      considered: drivers.length,
      eligible: eligible.length,
      candidates: toCandidateScores(ranked.slice(0, DECISION_LIST_LIMIT)),
      exclusions: excluded.listed,
      excluded_by_reason: excluded.byReason,
      winner: winner ? { driver_id: winner.userId, driver_name: winner.name } : null,
    },
  };
}

/** A decision for a driver the caller named (manual assignment, claim): nothing ranked, the choice recorded. */
export function namedDecision(strategy: 'manual' | 'claim', driver: { userId: string; name: string }, now: Date): DispatchDecision {
  return {
    strategy,
    tie_rule: strategy === 'manual' ? 'chosen by the dispatcher' : 'first driver to claim the pool offer',
    decided_at: now.toISOString(),
    considered: 1,
    eligible: 1,
    candidates: [{ driver_id: driver.userId, driver_name: driver.name, eta_minutes: null, distance_meters: null, load: 0, rank: 1 }],
    exclusions: [],
    winner: { driver_id: driver.userId, driver_name: driver.name },
  };
}

/** Moves the round-robin cursor to the driver just chosen (in the decision's transaction). */
export async function advanceCursor(em: EntityManager, siteId: string, cursorKey: string, driverId: string): Promise<void> {
  await em.execute('update dispatch_cursor set last_driver_id = ?, updated_at = ? where site_id = ? and scope_key = ?', [driverId, new Date(), siteId, cursorKey]);
}

export async function siteTimezone(em: EntityManager, siteId: string): Promise<string> {
  const [row] = await em.execute<{ timezone: string | null }[]>('select timezone from site where id = ?', [siteId]);
  return row?.timezone || 'UTC';
}

/** The cursor row, created on first use and locked until the transaction ends (a row lock works across processes). */
async function lockCursor(em: EntityManager, siteId: string, cursorKey: string): Promise<string | null> {
  await em.execute('insert into dispatch_cursor (site_id, scope_key, updated_at) values (?, ?, ?) on conflict do nothing', [siteId, cursorKey, new Date()]);
  const [row] = await em.execute<{ last_driver_id: string | null }[]>('select last_driver_id from dispatch_cursor where site_id = ? and scope_key = ? for update', [siteId, cursorKey]);
  return row?.last_driver_id ?? null;
}

/** The site's active service zones containing the job's pickup. */
async function serviceZonesAt(em: EntityManager, job: JobTarget): Promise<Set<string>> {
  const pickup = job.pickup;
  if (!pickup) return new Set();
  const zones = await em.find(ZoneSchema, { kind: 'service', isActive: true });
  return new Set(zones.filter((z) => booleanPointInPolygon([pickup.lng, pickup.lat], z.geometry)).map((z) => z.id));
}
