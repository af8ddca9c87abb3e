import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { DomainError } from '../domain-error.ts';
import type { JobActor } from '../jobs/job-input.ts';
import type { Availability } from '../../machines/driver-availability.machine.ts';
import { readDriverState, type DriverStateRow } from './driver-status.ts';
import { DEFAULT_TRACK_THROTTLE, thinTrack, type TrackMemory, type TrackThrottle } from './driver-track.ts';
import { LOCATION_STATEMENT, locationArguments, readLocationRows, type LastFix, type LocationRow, type TimedFix } from './driver-track-sql.ts';
import { executeInTenantRoundTrip } from './tenant-round-trip.ts';

export type LocationPing = { lat: number; lng: number; heading?: number; speed?: number; accuracy?: number; recorded_at: string };

export type DriverLocation = {
  user_id: string;
  availability: Availability;
  lat: number | null;
  lng: number | null;
  heading: number | null;
  speed: number | null;
  accuracy: number | null;
  recorded_at: string | null;
};

export const MAX_FUTURE_SKEW_MS = 60_000;

export type LocationVerdict = { accepted: true } | { accepted: false; reason: 'stale' | 'duplicate' };

/** One fix of one driver, as received (REST body, socket event, or one item of an offline batch). */
export type DriverFix = { userId: string; ping: LocationPing };

export type AppliedLocations = {
  /** One per fix, in the order given. */
  verdicts: LocationVerdict[];
  /** The fixes that became a driver's current position, in the order given (what dispatch is told). */
  applied: DriverFix[];
  /** How many track points were stored. */
  stored: number;
};

/**
 * Whether a fix is dated too far ahead of `now`: device clocks drift, so a fix a little ahead is accepted, but one
 * far ahead would block every later ping.
 */
export function isFromTheFuture(ping: LocationPing, now: Date): boolean {
  return Date.parse(ping.recorded_at) - now.getTime() > MAX_FUTURE_SKEW_MS;
}

/** The earliest fix time stored: years before 1 have no `timestamptz` literal, and no device sends them anyway. */
const EARLIEST_FIX_MS = Date.UTC(2000, 0, 1);

/**
 * RFC 3339 admits times JavaScript cannot represent (a leap second `23:59:60`) and years PostgreSQL cannot store
 * (`0000`): those are refused, not stored. One such fix in a shared batch statement would fail every fix in it.
 */
export function hasUsableTime(ping: LocationPing): boolean {
  return usable(Date.parse(ping.recorded_at));
}

const usable = (recordedAtMs: number): boolean => Number.isFinite(recordedAtMs) && recordedAtMs >= EARLIEST_FIX_MS;

/**
 * What is wrong with a fix's time (`Date.parse` of its `recorded_at`) at `nowMs`, as the end of the sentence
 * "recorded_at ...", or null when it may be applied: the checks of `hasUsableTime` and `isFromTheFuture` on a time
 * parsed once.
 */
export function fixTimeProblem(recordedAtMs: number, nowMs: number): string | null {
  if (!usable(recordedAtMs)) return 'is not a representable time';
  return recordedAtMs - nowMs > MAX_FUTURE_SKEW_MS ? 'is more than a minute in the future' : null;
}

/**
 * From how many drivers known to the tracker (so at least as many `driver_state` rows) the location statement runs
 * its generic plan, made once per connection: planning it for each batch cost ~0.6 ms of PostgreSQL CPU, as much as
 * applying 20 fixes (an interleaved A/B of 20-fix batches: 60 µs per fix generic, 100 custom). Not before: a generic
 * plan is kept for the connection's life (until the table's statistics change), and one made while `driver_state` is
 * nearly empty and never analyzed cannot tell its primary key from `(site_id, change_xid)` (both estimate one row);
 * a bench run whose plans were made then read every driver of the site per fix (71M index entries in 2 minutes). A
 * few hundred rows make the difference clear; a fleet this small sends too few fixes for planning to matter.
 */
const GENERIC_PLAN_FROM_DRIVERS = 1000;

/** Verdicts are shared, never changed: one object each instead of one per fix. */
const ACCEPTED: LocationVerdict = Object.freeze({ accepted: true });
const STALE: LocationVerdict = Object.freeze({ accepted: false, reason: 'stale' });
const DUPLICATE: LocationVerdict = Object.freeze({ accepted: false, reason: 'duplicate' });

/**
 * THE way a position reaches a driver's actor, for REST and sockets alike (sockets pass many fixes of many drivers
 * in one call: group commit). One prepared statement (`LOCATION_STATEMENT`) in one transaction of its own, bound to the site:
 * - each fix, in the order given, is applied when newer than the driver's last applied fix; an older one is
 *   `stale`, an exact repeat of the last one a `duplicate` (both leave the current position alone);
 * - the newest fix per driver is written to `driver_state` unless a newer one is stored;
 * - fixes become track points under the throttle (exact repeats never do, being too close to themselves).
 * Resolves after the commit. Positions are not audited (one record per ping would drown the log) and do not touch
 * the availability version. Callers parse each fix's time once (`recordedAtMs`), check it with `fixTimeProblem`
 * first, and never pass two batches with fixes of the same driver at once (verdicts are computed against the state
 * before the batch).
 * `memory` (the tracker's) skips fixes too close to a known stored point.
 */
export async function applyLocations(
  orm: MikroORM,
  siteId: string,
  fixes: TimedFix[],
  throttle: TrackThrottle = DEFAULT_TRACK_THROTTLE,
  memory?: TrackMemory,
): Promise<AppliedLocations> {
  if (fixes.length === 0) return { verdicts: [], applied: [], stored: 0 };
  const newest = new Map<string, TimedFix>();
  const candidates: TrackPointFix[] = [];
  let earliestMs = Infinity;
  for (const fix of fixes) {
    if (fix.recordedAtMs < earliestMs) earliestMs = fix.recordedAtMs;
    const best = newest.get(fix.userId);
    if (!best || fix.recordedAtMs > best.recordedAtMs) newest.set(fix.userId, fix);
    if (!memory?.rulesOut(siteId, fix.userId, fix.recordedAtMs, fix.ping, throttle)) {
      candidates.push({ userId: fix.userId, ping: fix.ping, recordedAtMs: fix.recordedAtMs, lat: fix.ping.lat, lng: fix.ping.lng });
    }
  }
  const points = thinTrack(candidates, throttle);
  const plan = (memory?.size ?? 0) >= GENERIC_PLAN_FROM_DRIVERS ? 'generic' : 'custom';
  const rows = await executeInTenantRoundTrip<LocationRow>(orm, siteId, LOCATION_STATEMENT, plan, (literal) =>
    locationArguments(siteId, [...newest.values()], points, earliestMs, throttle, literal),
  );
  const { before, stored } = readLocationRows(rows);
  for (const point of stored) memory?.remember(siteId, point);

  const verdicts: LocationVerdict[] = [];
  const applied: DriverFix[] = [];
  for (const fix of fixes) {
    const { userId, recordedAtMs: t, ping } = fix;
    const last = before.get(userId) ?? NEVER_APPLIED;
    if (t === last.t && ping.lat === last.lat && ping.lng === last.lng) verdicts.push(DUPLICATE);
    else if (t <= last.t) verdicts.push(STALE);
    else {
      // The batch's rows are ours to update in place; a driver without one gets their own.
      if (last === NEVER_APPLIED) before.set(userId, { t, lat: ping.lat, lng: ping.lng });
      else {
        last.t = t;
        last.lat = ping.lat;
        last.lng = ping.lng;
      }
      // A fresh pair, not the caller's fix: listeners hold these for up to 50 ms (the live feed's interval), and a
      // socket fix carries its whole event (acknowledgement, packet) with it.
      applied.push({ userId, ping });
      verdicts.push(ACCEPTED);
    }
  }
  return { verdicts, applied, stored: stored.length };
}

/** The last applied fix of a driver the statement found none for. */
const NEVER_APPLIED: LastFix = Object.freeze({ t: -Infinity, lat: null, lng: null });

/** A fix that may become a track point, with its position where the throttle reads it. */
type TrackPointFix = TimedFix & { lat: number; lng: number };

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

function locationOf(userId: string, row: DriverStateRow | null): DriverLocation {
  return {
    user_id: userId,
    availability: row?.availability ?? 'offline',
    lat: row?.last_lat ?? null,
    lng: row?.last_lng ?? null,
    heading: row?.last_heading ?? null,
    speed: row?.last_speed ?? null,
    accuracy: row?.last_accuracy ?? null,
    recorded_at: iso(row?.last_recorded_at ?? null),
  };
}

/**
 * The last known position of a driver of the site: staff read any driver's, a driver only their own (another
 * driver's is 404, as their jobs are: a driver learns nothing about colleagues).
 * @throws DomainError 400 when staff name no driver; 404 when the user is not a driver of the site or not visible
 */
export async function driverLocation(em: EntityManager, siteId: string, actor: JobActor, userId: string | undefined): Promise<DriverLocation> {
  const target = userId ?? (actor.role === 'driver' ? actor.userId : undefined);
  if (!target) throw DomainError.invalid('USER_ID_REQUIRED', 'user_id names the driver whose position to read', 'user_id');
  if (actor.role === 'driver' && target !== actor.userId) throw DomainError.notFound('Driver', target);
  const profile = await em.findOne(UserProfileSchema, { userId: target, role: 'driver' });
  if (!profile) throw DomainError.notFound('Driver', target);
  return locationOf(target, await readDriverState(em, siteId, target));
}
