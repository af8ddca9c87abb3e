import type { DriverFix } from './driver-location.ts';
import { SQL_METERS_BETWEEN, type TrackThrottle } from './driver-track.ts';
import { numberLiteral, type Literal, type PreparedStatement } from './tenant-round-trip.ts';

export type LastFix = { t: number; lat: number | null; lng: number | null };
export type StoredPoint = { userId: string; recordedAtMs: number; lat: number; lng: number };

/** A row of {@link LOCATION_STATEMENT}: `t` is epoch milliseconds (a float8, so no Date parsing per row). */
export type LocationRow = { kind: 'before' | 'stored'; user_id: string; lat: number | null; lng: number | null; t: number | null };

/** A fix as the statement takes it: the driver, the fix, and its time in epoch milliseconds (parsed once). */
export type TimedFix = DriverFix & { recordedAtMs: number };

/** Fixes as seven arrays, one per column; `ms` is epoch milliseconds (exact: no timestamp text to parse). */
const FIXES = (first: number, alias = 'v') => {
  const [user, lat, lng, heading, speed, accuracy, ms] = [0, 1, 2, 3, 4, 5, 6].map((i) => `$${first + i}`);
  return `unnest(${user}::text[], ${lat}::float8[], ${lng}::float8[], ${heading}::float8[], ${speed}::float8[], ${accuracy}::float8[], ${ms}::int8[])
    as ${alias} (user_id, lat, lng, heading, speed, accuracy, ms)`;
};
const AT = (ms: string) => `(timestamptz 'epoch' + ${ms} * interval '1 millisecond')`;

/**
 * One statement for a batch, prepared once per connection (its parse and plan were a few milliseconds per batch
 * with inlined VALUES): `$1` site, `$2` the statement time, `$3..$9` each driver's newest fix, `$10..$16` the track
 * candidates, `$17` the throttle's seconds, `$18` its metres, `$19` the batch's earliest fix time. It reads the
 * drivers' last applied fixes (as they were before it) and returns those not older than the batch's earliest fix:
 * an older one cannot make any fix of the batch stale or a duplicate, and in the common case (every driver's fixes
 * arrive in order) that is all of them, so the batch ships back only the track points it stored. It writes each driver's newest fix as the position unless a newer one is stored (`on conflict ... where`,
 * which PostgreSQL re-checks against the latest row version when another transaction wrote it first), and inserts
 * the track points that no stored point of the same driver is too close to. Both reads are LATERAL ... LIMIT 1, an
 * index probe per fix whatever the plan's row estimates say (without statistics a join compared every fix with
 * every row of the site: seconds per batch at 5,000 drivers). The candidates' time window is computed once in a
 * materialized CTE so the probe compares plain columns: row-level security lets only leakproof conditions into an
 * index scan, and `timestamptz - interval` is not leakproof, so computed bounds were a filter over every point the
 * driver ever stored (hundreds a day) instead of a range of the primary key.
 */
export const LOCATION_STATEMENT: PreparedStatement = {
  name: 'driver_location_batch',
  types: ['text', 'timestamptz', 'text[]', 'float8[]', 'float8[]', 'float8[]', 'float8[]', 'float8[]', 'int8[]', 'text[]', 'float8[]', 'float8[]', 'float8[]', 'float8[]', 'float8[]', 'int8[]', 'float8', 'float8', 'int8'],
  sql: `with latest as (select v.*, ${AT('v.ms')} as recorded_at from ${FIXES(3)}),
    before as (
      select l.user_id, d.last_lat, d.last_lng, d.last_recorded_at from latest l
      cross join lateral (select last_lat, last_lng, last_recorded_at from driver_state where site_id = $1 and user_id = l.user_id limit 1) d),
    written as (
      insert into driver_state (site_id, user_id, last_lat, last_lng, last_heading, last_speed, last_accuracy, last_recorded_at, updated_at)
      select $1, user_id, lat, lng, heading, speed, accuracy, recorded_at, $2 from latest
      on conflict (site_id, user_id) do update set last_lat = excluded.last_lat, last_lng = excluded.last_lng,
        last_heading = excluded.last_heading, last_speed = excluded.last_speed, last_accuracy = excluded.last_accuracy,
        last_recorded_at = excluded.last_recorded_at, updated_at = excluded.updated_at
      where driver_state.last_recorded_at is null or driver_state.last_recorded_at < excluded.last_recorded_at
      returning 1),
    candidates as materialized (
      select c.*, c.recorded_at - make_interval(secs => $17) as window_start, c.recorded_at + make_interval(secs => $17) as window_end
      from (select f.*, ${AT('f.ms')} as recorded_at from ${FIXES(10, 'f')}) c),
    stored as (
      insert into track_point (site_id, user_id, recorded_at, lat, lng, heading, speed, accuracy, created_at)
      select $1, v.user_id, v.recorded_at, v.lat, v.lng, v.heading, v.speed, v.accuracy, $2 from candidates v
      left join lateral (
        select 1 as hit from track_point t where t.site_id = $1 and t.user_id = v.user_id
          and t.recorded_at > v.window_start and t.recorded_at < v.window_end
          and ${SQL_METERS_BETWEEN} < $18 limit 1) near on true
      where near.hit is null
      on conflict do nothing
      returning user_id, lat, lng, recorded_at)
    select 'before' as kind, user_id, last_lat as lat, last_lng as lng, (extract(epoch from last_recorded_at) * 1000)::float8 as t from before
      where last_recorded_at >= ${AT('$19')}
    union all select 'stored', user_id, lat, lng, (extract(epoch from recorded_at) * 1000)::float8 from stored`,
};

/** The arguments of {@link LOCATION_STATEMENT}, as literals for `execute` (a few short array literals, not SQL per fix). */
export function locationArguments(siteId: string, newest: TimedFix[], points: TimedFix[], earliestMs: number, throttle: TrackThrottle, literal: Literal): string[] {
  return [
    literal(siteId),
    literal(new Date().toISOString()),
    ...fixArrays(newest, literal),
    ...fixArrays(points, literal),
    numberLiteral(throttle.intervalSeconds),
    numberLiteral(throttle.distanceMeters),
    numberLiteral(earliestMs),
  ];
}

/**
 * The seven column arrays as text, each built by appending (no array of per-fix strings to join: a batch's arguments
 * were a few hundred short-lived strings and arrays per statement).
 */
function fixArrays(fixes: TimedFix[], literal: Literal): string[] {
  let users = '';
  let lats = '';
  let lngs = '';
  let headings = '';
  let speeds = '';
  let accuracies = '';
  let times = '';
  for (let i = 0; i < fixes.length; i += 1) {
    const { userId, ping, recordedAtMs } = fixes[i]!;
    const comma = i === 0 ? '' : ',';
    users += comma + arrayText(userId);
    lats += comma + numberLiteral(ping.lat);
    lngs += comma + numberLiteral(ping.lng);
    headings += comma + optionalNumber(ping.heading);
    speeds += comma + optionalNumber(ping.speed);
    accuracies += comma + optionalNumber(ping.accuracy);
    times += comma + numberLiteral(recordedAtMs);
  }
  return [users, lats, lngs, headings, speeds, accuracies, times].map((items) => literal(`{${items}}`));
}

/** A string as an element of an array literal: double-quoted, `"` and `\` escaped (the outer literal quotes the rest). */
const arrayText = (value: string): string => `"${value.replace(/["\\]/g, '\\$&')}"`;

const optionalNumber = (value: number | undefined | null): string => (value === undefined || value === null ? 'NULL' : numberLiteral(value));

/**
 * The statement's rows: the last applied fix before the batch of each driver whose fix is not older than the
 * batch's earliest (a driver without one reads as never applied: every fix of theirs is newer), and the track points
 * stored.
 */
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
