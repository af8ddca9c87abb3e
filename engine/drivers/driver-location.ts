import type { EntityManager } from '@mikro-orm/postgresql';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { DomainError } from '../domain-error.ts';
import type { JobActor } from '../jobs/job-input.ts';
import type { Availability } from '../../machines/driver-availability.machine.ts';
import { readDriverState, type DriverStateRow } from './driver-status.ts';

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

/** Device clocks drift: a fix a little ahead of ours is accepted, one far ahead would block every later ping. */
export const MAX_FUTURE_SKEW_MS = 60_000;

/**
 * Stores a driver's position when it is newer than the stored one. The check and the write are one conditional
 * upsert, so pings racing each other (REST retries, several devices) need no lock and no mailbox: the newest fix
 * wins whatever the arrival order, and duplicates or late arrivals change nothing. Positions are not audited
 * (one record per ping would drown the log) and do not touch the availability version.
 * @throws DomainError 400 INVALID_RECORDED_AT when the fix is dated more than a minute ahead of `now`
 */
export async function recordLocation(em: EntityManager, siteId: string, userId: string, ping: LocationPing, now: Date): Promise<{ accepted: boolean; reason?: 'stale' }> {
  const recordedAt = new Date(ping.recorded_at);
  if (recordedAt.getTime() - now.getTime() > MAX_FUTURE_SKEW_MS) {
    throw DomainError.invalid('INVALID_RECORDED_AT', 'recorded_at is more than a minute in the future', 'recorded_at');
  }
  const fix = [ping.lat, ping.lng, ping.heading ?? null, ping.speed ?? null, ping.accuracy ?? null, recordedAt];
  const rows = await em.execute<{ user_id: string }[]>(
    `insert into driver_state (site_id, user_id, last_lat, last_lng, last_heading, last_speed, last_accuracy, last_recorded_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (site_id, user_id) do update set last_lat = excluded.last_lat, last_lng = excluded.last_lng,
       last_heading = excluded.last_heading, last_speed = excluded.last_speed, last_accuracy = excluded.last_accuracy,
       last_recorded_at = excluded.last_recorded_at, updated_at = excluded.updated_at
     where driver_state.last_recorded_at is null or driver_state.last_recorded_at < excluded.last_recorded_at
     returning user_id`,
    [siteId, userId, ...fix, new Date()],
  );
  return rows.length > 0 ? { accepted: true } : { accepted: false, reason: 'stale' };
}

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
