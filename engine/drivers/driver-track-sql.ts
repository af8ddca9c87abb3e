import type { EntityManager } from '@mikro-orm/postgresql';
import type { DriverFix, LocationPing } from './driver-location.ts';
import { SQL_METERS_BETWEEN, type TrackCandidate, type TrackThrottle } from './driver-track.ts';

export type LastFix = { t: number; lat: number | null; lng: number | null };
export type StoredPoint = { userId: string; recordedAtMs: number; lat: number; lng: number };

type Row = { kind: 'before' | 'stored'; user_id: string; lat: number | null; lng: number | null; recorded_at: Date | null };

const FIX_COLUMNS = '(user_id, lat, lng, heading, speed, accuracy, recorded_at)';
const FIX_VALUES = '(?, ?::float8, ?::float8, ?::float8, ?::float8, ?::float8, ?::timestamptz)';

function valuesOf(fixes: { userId: string; ping: LocationPing }[], params: unknown[]): string {
  for (const { userId, ping } of fixes) {
    params.push(userId, ping.lat, ping.lng, ping.heading ?? null, ping.speed ?? null, ping.accuracy ?? null, new Date(ping.recorded_at));
  }
  return fixes.map(() => FIX_VALUES).join(', ');
}

/**
 * One statement, one round trip, for a batch: reads the drivers' last applied fixes (as they were before it), writes
 * each driver's newest fix as the position unless a newer one is stored (`on conflict ... where`, which PostgreSQL
 * re-checks against the latest row version when another transaction wrote it first), and inserts the track points
 * that no stored point of the same driver is too close to.
 * @returns the last applied fix per driver before the batch, and the track points stored
 */
export async function writeLocations(
  em: EntityManager,
  siteId: string,
  newest: DriverFix[],
  points: (TrackCandidate & { ping: LocationPing })[],
  throttle: TrackThrottle,
): Promise<{ before: Map<string, LastFix>; stored: StoredPoint[] }> {
  const params: unknown[] = [];
  const latest = valuesOf(newest, params);
  params.push(siteId, siteId, new Date());
  let sql = `with latest ${FIX_COLUMNS} as (values ${latest}),
    before as (select user_id, last_lat, last_lng, last_recorded_at from driver_state where site_id = ? and user_id in (select user_id from latest)),
    written as (
      insert into driver_state (site_id, user_id, last_lat, last_lng, last_heading, last_speed, last_accuracy, last_recorded_at, updated_at)
      select ?, user_id, lat, lng, heading, speed, accuracy, recorded_at, ?::timestamptz from latest
      on conflict (site_id, user_id) do update set last_lat = excluded.last_lat, last_lng = excluded.last_lng,
        last_heading = excluded.last_heading, last_speed = excluded.last_speed, last_accuracy = excluded.last_accuracy,
        last_recorded_at = excluded.last_recorded_at, updated_at = excluded.updated_at
      where driver_state.last_recorded_at is null or driver_state.last_recorded_at < excluded.last_recorded_at
      returning 1)`;
  let tail = '';
  if (points.length > 0) {
    const candidates = valuesOf(points.map((p) => ({ userId: p.userId, ping: p.ping })), params);
    params.push(siteId, new Date(), siteId, throttle.intervalSeconds, throttle.intervalSeconds, throttle.distanceMeters);
    sql += `,
    candidate ${FIX_COLUMNS} as (values ${candidates}),
    stored as (
      insert into track_point (site_id, user_id, recorded_at, lat, lng, heading, speed, accuracy, created_at)
      select ?, v.user_id, v.recorded_at, v.lat, v.lng, v.heading, v.speed, v.accuracy, ?::timestamptz from candidate v
      where not exists (
        select 1 from track_point t where t.site_id = ? and t.user_id = v.user_id
          and t.recorded_at > v.recorded_at - make_interval(secs => ?) and t.recorded_at < v.recorded_at + make_interval(secs => ?)
          and ${SQL_METERS_BETWEEN} < ?)
      on conflict do nothing
      returning user_id, lat, lng, recorded_at)`;
    tail = `union all select 'stored', user_id, lat, lng, recorded_at from stored`;
  }
  const rows = await em.execute<Row[]>(`${sql}
    select 'before' as kind, user_id, last_lat as lat, last_lng as lng, last_recorded_at as recorded_at from before ${tail}`, params);
  const before = new Map<string, LastFix>();
  const stored: StoredPoint[] = [];
  for (const row of rows) {
    const t = row.recorded_at ? new Date(row.recorded_at).getTime() : -Infinity;
    if (row.kind === 'before') before.set(row.user_id, { t, lat: row.lat, lng: row.lng });
    else stored.push({ userId: row.user_id, recordedAtMs: t, lat: row.lat!, lng: row.lng! });
  }
  return { before, stored };
}
