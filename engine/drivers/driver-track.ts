import type { EntityManager } from '@mikro-orm/postgresql';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { DomainError } from '../domain-error.ts';

/** A stored track point is kept at most every `intervalSeconds`, unless the driver moved `distanceMeters` since. */
export type TrackThrottle = { intervalSeconds: number; distanceMeters: number };

export const DEFAULT_TRACK_THROTTLE: TrackThrottle = { intervalSeconds: 30, distanceMeters: 200 };

export type TrackCandidate = { userId: string; recordedAtMs: number; lat: number; lng: number };

const EARTH_RADIUS_M = 6_371_000;
const radians = (degrees: number) => (degrees * Math.PI) / 180;

/**
 * Equirectangular distance: within a few metres of the great circle at throttle scales (hundreds of metres), and the
 * same formula as the SQL check in `insertThrottledTrack`, so the batch and the table agree.
 */
export function metersBetween(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const x = radians(b.lng - a.lng) * Math.cos(radians((a.lat + b.lat) / 2));
  const y = radians(b.lat - a.lat);
  return EARTH_RADIUS_M * Math.sqrt(x * x + y * y);
}

/** SQL for the same distance between rows `t` (stored) and `v` (new). */
export const SQL_METERS_BETWEEN = `${EARTH_RADIUS_M} * sqrt(power(radians(v.lng - t.lng) * cos(radians((v.lat + t.lat) / 2)), 2) + power(radians(v.lat - t.lat), 2))`;

/** Whether a point and a fix (its time, its position) are too close in both time and space to be stored together. */
export function tooClose(a: TrackCandidate, recordedAtMs: number, position: { lat: number; lng: number }, throttle: TrackThrottle): boolean {
  return Math.abs(a.recordedAtMs - recordedAtMs) < throttle.intervalSeconds * 1000 && metersBetween(a, position) < throttle.distanceMeters;
}

/**
 * The candidates of one batch that may be stored, by time per driver: a point is kept when no point kept before it
 * is too close. The rule is symmetric (no two stored points are too close), so it holds whatever order points
 * arrive in; the insert then applies it against the points already stored.
 */
export function thinTrack<T extends TrackCandidate>(candidates: T[], throttle: TrackThrottle): T[] {
  const kept = new Map<string, T[]>();
  for (const point of [...candidates].sort((a, b) => a.recordedAtMs - b.recordedAtMs)) {
    const mine = kept.get(point.userId) ?? [];
    if (mine.some((other) => tooClose(other, point.recordedAtMs, point, throttle))) continue;
    mine.push(point);
    kept.set(point.userId, mine);
  }
  return [...kept.values()].flat();
}

/**
 * The newest stored track point per driver, as this process last saw it: a fix too close to it cannot be stored
 * (the rule forbids it whatever else is stored), so it is dropped before the SQL. Only ever a pre-filter: the insert
 * still checks the table, so a stale entry (another process stored a newer point) costs a probe, never a wrong row.
 * Held per site, then per driver: a lookup per fix builds no key.
 */
export class TrackMemory {
  private readonly sites = new Map<string, Map<string, TrackCandidate>>();
  private drivers = 0;

  constructor(private readonly maxDrivers = 200_000) {}

  /** How many drivers are remembered (each has a stored point, so a `driver_state` row). */
  get size(): number {
    return this.drivers;
  }

  /** Whether a fix of `userId` at `recordedAtMs` and `position` is too close to the driver's remembered point. */
  rulesOut(siteId: string, userId: string, recordedAtMs: number, position: { lat: number; lng: number }, throttle: TrackThrottle): boolean {
    const known = this.sites.get(siteId)?.get(userId);
    return known !== undefined && tooClose(known, recordedAtMs, position, throttle);
  }

  remember(siteId: string, point: TrackCandidate): void {
    let site = this.sites.get(siteId);
    const known = site?.get(point.userId);
    if (known && known.recordedAtMs >= point.recordedAtMs) return;
    if (!known && this.drivers >= this.maxDrivers) {
      this.sites.clear();
      this.drivers = 0;
      site = undefined;
    }
    if (!site) {
      site = new Map();
      this.sites.set(siteId, site);
    }
    if (!known) this.drivers += 1;
    site.set(point.userId, { userId: point.userId, recordedAtMs: point.recordedAtMs, lat: point.lat, lng: point.lng });
  }
}

export type TrackPointView = {
  lat: number;
  lng: number;
  heading: number | null;
  speed: number | null;
  accuracy: number | null;
  recorded_at: string;
};

export type TrackQuery = { driverUserId: string; from?: string; to?: string; limit: number };

/**
 * A driver's stored points between `from` and `to` (inclusive), oldest first, at most `limit`.
 * @throws DomainError 404 when the user is not a driver of the site; 400 INVALID_RANGE when `from` is after `to`
 */
export async function readTrack(em: EntityManager, siteId: string, query: TrackQuery): Promise<TrackPointView[]> {
  if (query.from && query.to && Date.parse(query.from) > Date.parse(query.to)) {
    throw DomainError.invalid('INVALID_RANGE', 'from must not be after to', 'from');
  }
  const profile = await em.findOne(UserProfileSchema, { userId: query.driverUserId, role: 'driver' });
  if (!profile) throw DomainError.notFound('Driver', query.driverUserId);
  const rows = await em.execute<{ lat: number; lng: number; heading: number | null; speed: number | null; accuracy: number | null; recorded_at: Date }[]>(
    `select lat, lng, heading, speed, accuracy, recorded_at from track_point
     where site_id = ? and user_id = ? and recorded_at >= ? and recorded_at <= ? order by recorded_at limit ?`,
    [siteId, query.driverUserId, new Date(query.from ?? 0), query.to ? new Date(query.to) : new Date('9999-12-31T00:00:00Z'), query.limit],
  );
  return rows.map((row) => ({ ...row, recorded_at: new Date(row.recorded_at).toISOString() }));
}
