import type { EntityManager } from '@mikro-orm/postgresql';
import type { Availability } from '../../machines/driver-availability.machine.ts';
import type { WorkerScheduleData } from '../fleet/schedule.ts';
import type { DriverFacts } from './driver-facts.ts';

/** What rarely changes about a driver: cached per site, reloaded when the site's fleet version moves. */
type SlowFacts = Omit<DriverFacts, 'availability' | 'position' | 'load' | 'busy'>;
type SiteIndex = { key: string; loadedAt: number; drivers: SlowFacts[]; byTeam: Map<string, SlowFacts[]> };

/** Reload at least this often even without a version change (a name edited while acting in another site). */
export const DRIVER_INDEX_MAX_AGE_MS = 60_000;

const indexes = new Map<string, SiteIndex>();

export type IndexedScope = { teamId?: string; /** Read the positions of available drivers only (a strategy's decision). */ onlyAvailable: boolean };

/**
 * The site's drivers as {@link loadDriverFacts} gives them (without busy windows), from a per-process index:
 * - the slow facts (names, teams, zones, schedule, default vehicle type, max load, active flags) are kept in memory
 *   under the site's `dispatch_fleet_version` (bumped by triggers in the writing transaction, migration 0018) and
 *   the version row's `xmin`, so a rolled-back writer that reused a version number is not mistaken for the same data;
 * - the fast facts (availability, last position, open-job load) are read each time in one statement over two indexes.
 * With `onlyAvailable` the driver actors that are not `available` are not read: they keep availability `offline`,
 * which excludes them exactly as their real state would (every exclusion reason before `not_available` comes from
 * the slow facts or the load, both still read). The caller re-checks its winner in the transaction (decide.ts).
 * @returns the drivers ordered by user id, and the site's time zone (read by the same version statement)
 */
export async function indexedDriverFacts(em: EntityManager, siteId: string, scope: IndexedScope): Promise<{ drivers: DriverFacts[]; timezone: string }> {
  const [head] = await em.execute<{ timezone: string | null; version: string | null; row_xmin: string | null }[]>(
    'select s.timezone, v.version, v.xmin::text as row_xmin from site s left join dispatch_fleet_version v on v.site_id = s.id where s.id = ?',
    [siteId],
  );
  const key = `${head?.version ?? 0}:${head?.row_xmin ?? ''}`;
  let index = indexes.get(siteId);
  if (!index || index.key !== key || Date.now() - index.loadedAt > DRIVER_INDEX_MAX_AGE_MS) {
    index = { key, loadedAt: Date.now(), drivers: await loadSlowFacts(em, siteId), byTeam: new Map() };
    indexes.set(siteId, index);
  }
  const slow = scope.teamId ? teamDrivers(index, scope.teamId) : index.drivers;
  const fast = await loadFastFacts(em, siteId, scope.onlyAvailable);
  const drivers = slow.map((s): DriverFacts => {
    const state = fast.states.get(s.userId);
    return { ...s, availability: state?.availability ?? 'offline', position: state?.position ?? null, load: fast.loads.get(s.userId) ?? 0, busy: [] };
  });
  return { drivers, timezone: head?.timezone || 'UTC' };
}

/** Forgets a site's cached facts (a winner failed its re-check: something changed that the version did not show). */
export function invalidateDriverIndex(siteId: string): void {
  indexes.delete(siteId);
}

function teamDrivers(index: SiteIndex, teamId: string): SlowFacts[] {
  let list = index.byTeam.get(teamId);
  if (!list) {
    list = index.drivers.filter((d) => d.teamIds.includes(teamId));
    index.byTeam.set(teamId, list);
  }
  return list;
}

type SlowRow = {
  user_id: string; email: string; first_name: string | null; last_name: string | null; display_name: string | null;
  operational_status: string; profile_active: boolean; default_vehicle_id: string | null; vehicle_type: string | null;
  team_ids: string[]; zone_ids: string[]; max_load: number | null; weekly: WorkerScheduleData['weekly'] | null; exceptions: WorkerScheduleData['exceptions'] | null;
};

/** The same join and naming rules as `loadDriverFacts`, without the actor state and the loads. */
async function loadSlowFacts(em: EntityManager, siteId: string): Promise<SlowFacts[]> {
  const rows = await em.execute<SlowRow[]>(
    `select w.user_id, u.email, u.first_name, u.last_name, u.display_name, w.operational_status, p.is_active as profile_active,
       w.default_vehicle_id, v.type as vehicle_type, w.team_ids, w.zone_ids, w.max_load, ws.weekly, ws.exceptions
     from worker w
     join user_profile p on p.site_id = w.site_id and p.user_id = w.user_id and p.role = 'driver'
     join app_user u on u.id = w.user_id
     left join vehicle v on v.site_id = w.site_id and v.id = w.default_vehicle_id and v.is_active
     left join worker_schedule ws on ws.site_id = w.site_id and ws.user_id = w.user_id
     where w.site_id = ? order by w.user_id asc`,
    [siteId],
  );
  return rows.map((row) => ({
    userId: row.user_id,
    name: row.display_name ?? ([row.first_name, row.last_name].filter(Boolean).join(' ') || row.email),
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    active: row.operational_status === 'active' && row.profile_active,
    operationalStatus: row.operational_status,
    defaultVehicleId: row.default_vehicle_id,
    vehicleType: row.vehicle_type,
    teamIds: row.team_ids,
    zoneIds: row.zone_ids,
    maxLoad: row.max_load,
    schedule: row.weekly && row.exceptions ? { weekly: row.weekly, exceptions: row.exceptions } : null,
  }));
}

type FastRow = { user_id: string; availability: Availability | null; last_lat: number | null; last_lng: number | null; load: string | null };
type FastFacts = { states: Map<string, { availability: Availability; position: { lat: number; lng: number } | null }>; loads: Map<string, number> };

/** Actor states (all, or the available ones) and open-job counts, in one statement. */
async function loadFastFacts(em: EntityManager, siteId: string, onlyAvailable: boolean): Promise<FastFacts> {
  const rows = await em.execute<FastRow[]>(
    `select user_id, availability, last_lat, last_lng, null::bigint as load from driver_state
       where site_id = ?${onlyAvailable ? " and availability = 'available'" : ''}
     union all
     select driver_user_id, null, null, null, count(*) from job
       where site_id = ? and phase in ('assigned', 'in_progress') and deleted_at is null and driver_user_id is not null
       group by driver_user_id`,
    [siteId, siteId],
  );
  const facts: FastFacts = { states: new Map(), loads: new Map() };
  for (const row of rows) {
    if (row.load !== null) facts.loads.set(row.user_id, Number(row.load));
    else {
      const position = row.last_lat === null || row.last_lng === null ? null : { lat: Number(row.last_lat), lng: Number(row.last_lng) };
      facts.states.set(row.user_id, { availability: row.availability ?? 'offline', position });
    }
  }
  return facts;
}
