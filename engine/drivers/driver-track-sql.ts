import type { DriverFix, LocationPing } from './driver-location.ts';
import { SQL_METERS_BETWEEN, type TrackCandidate, type TrackThrottle } from './driver-track.ts';
import { numberLiteral, optionalNumberLiteral, type Literal } from './tenant-round-trip.ts';

export type LastFix = { t: number; lat: number | null; lng: number | null };
export type StoredPoint = { userId: string; recordedAtMs: number; lat: number; lng: number };

/** A row of {@link locationStatement}: `t` is epoch milliseconds (a float8, so no Date parsing per row). */
export type LocationRow = { kind: 'before' | 'stored'; user_id: string; lat: number | null; lng: number | null; t: number | null };

const FIX_COLUMNS = '(user_id, lat, lng, heading, speed, accuracy, recorded_at)';
/** VALUES infer a column's type from its literals (text when all are null): the casts make it definite. */
const TYPED_FIX = 'user_id, lat::float8, lng::float8, heading::float8, speed::float8, accuracy::float8, recorded_at::timestamptz';

function valuesOf(fixes: { userId: string; ping: LocationPing }[], literal: Literal): string {
  const rows: string[] = [];
  for (const { userId, ping } of fixes) {
    const at = literal(new Date(Date.parse(ping.recorded_at)).toISOString());
    rows.push(`(${literal(userId)}, ${numberLiteral(ping.lat)}, ${numberLiteral(ping.lng)}, ${optionalNumberLiteral(ping.heading)}, ${optionalNumberLiteral(ping.speed)}, ${optionalNumberLiteral(ping.accuracy)}, ${at})`);
  }
  return rows.join(', ');
}

/**
 * One statement for a batch: reads the drivers' last applied fixes (as they were before it), writes each driver's
 * newest fix as the position unless a newer one is stored (`on conflict ... where`, which PostgreSQL re-checks
 * against the latest row version when another transaction wrote it first), and inserts the track points that no
 * stored point of the same driver is too close to. The two reads are LATERAL ... LIMIT 1 so that each is an index probe
 * per fix whatever the planner's statistics say: without them (a fleet's first minutes) it joined every row of the
 * site against every fix, seconds per batch at 5,000 drivers. Values are inlined (checked numbers, quoted strings), so the
 * statement can travel in one round trip with its tenant settings.
 */
export function locationStatement(siteId: string, newest: DriverFix[], points: (TrackCandidate & { ping: LocationPing })[], throttle: TrackThrottle, literal: Literal): string {
  const site = literal(siteId);
  const now = literal(new Date().toISOString());
  let sql = `with latest ${FIX_COLUMNS} as (select ${TYPED_FIX} from (values ${valuesOf(newest, literal)}) v ${FIX_COLUMNS}),
    before as (
      select l.user_id, d.last_lat, d.last_lng, d.last_recorded_at from latest l
      cross join lateral (select last_lat, last_lng, last_recorded_at from driver_state where site_id = ${site} and user_id = l.user_id limit 1) d),
    written as (
      insert into driver_state (site_id, user_id, last_lat, last_lng, last_heading, last_speed, last_accuracy, last_recorded_at, updated_at)
      select ${site}, user_id, lat, lng, heading, speed, accuracy, recorded_at, ${now}::timestamptz from latest
      on conflict (site_id, user_id) do update set last_lat = excluded.last_lat, last_lng = excluded.last_lng,
        last_heading = excluded.last_heading, last_speed = excluded.last_speed, last_accuracy = excluded.last_accuracy,
        last_recorded_at = excluded.last_recorded_at, updated_at = excluded.updated_at
      where driver_state.last_recorded_at is null or driver_state.last_recorded_at < excluded.last_recorded_at
      returning 1)`;
  let tail = '';
  if (points.length > 0) {
    const interval = numberLiteral(throttle.intervalSeconds);
    sql += `,
    candidate ${FIX_COLUMNS} as (select ${TYPED_FIX} from (values ${valuesOf(points, literal)}) v ${FIX_COLUMNS}),
    stored as (
      insert into track_point (site_id, user_id, recorded_at, lat, lng, heading, speed, accuracy, created_at)
      select ${site}, v.user_id, v.recorded_at, v.lat, v.lng, v.heading, v.speed, v.accuracy, ${now}::timestamptz from candidate v
      left join lateral (
        select 1 as hit from track_point t where t.site_id = ${site} and t.user_id = v.user_id
          and t.recorded_at > v.recorded_at - make_interval(secs => ${interval}) and t.recorded_at < v.recorded_at + make_interval(secs => ${interval})
          and ${SQL_METERS_BETWEEN} < ${numberLiteral(throttle.distanceMeters)} limit 1) near on true
      where near.hit is null
      on conflict do nothing
      returning user_id, lat, lng, recorded_at)`;
    tail = `union all select 'stored', user_id, lat, lng, (extract(epoch from recorded_at) * 1000)::float8 from stored`;
  }
  return `${sql}
    select 'before' as kind, user_id, last_lat as lat, last_lng as lng, (extract(epoch from last_recorded_at) * 1000)::float8 as t from before ${tail}`;
}

/** The statement's rows: the last applied fix per driver before the batch, and the track points stored. */
export function readLocationRows(rows: LocationRow[]): { before: Map<string, LastFix>; stored: StoredPoint[] } {
  const before = new Map<string, LastFix>();
  const stored: StoredPoint[] = [];
  for (const row of rows) {
    const t = row.t ?? -Infinity;
    if (row.kind === 'before') before.set(row.user_id, { t, lat: row.lat, lng: row.lng });
    else stored.push({ userId: row.user_id, recordedAtMs: t, lat: row.lat!, lng: row.lng! });
  }
  return { before, stored };
}
