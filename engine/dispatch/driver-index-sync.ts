import type { EntityManager } from '@mikro-orm/postgresql';
import type { Availability } from '../../machines/driver-availability.machine.ts';
import type { WorkerScheduleData } from '../fleet/schedule.ts';
import type { DriverFacts } from './driver-facts.ts';
import { JOB_TARGET_SQL, type JobTargetRow } from './job-target.ts';

/** What rarely changes about a driver: cached per site, reloaded when the site's fleet version moves. */
export type SlowFacts = Omit<DriverFacts, 'availability' | 'position' | 'load' | 'busy'>;

/** A driver actor's row as the index keeps it: `[user_id, availability, last_lat, last_lng]`. */
export type StateChange = [userId: string, availability: Availability | null, lat: number | null, lng: number | null];
/** A job as the loads see it: `[job_id, driver_user_id when the job is open (assigned or in progress), else null]`. */
export type JobChange = [jobId: string, openDriverId: string | null];

/** One read of a site's head: its time zone, fleet version, and the fast facts changed since `since`. */
export type SiteHead = {
  timezone: string;
  /** `version:xmin` of the site's fleet version row (a rolled-back writer that reused a number has another xmin). */
  fleetKey: string;
  /** `pg_current_snapshot()` of the statement: what the next read starts from. */
  snapshot: string;
  /** The reading transaction's own id when it has written already: its rows are not committed (see driver-index.ts). */
  ownXid: string | null;
  /** Every driver actor of the site (since null), or the ones changed since. */
  states: StateChange[];
  /** Every open job (since null), or every job changed since (open or not). */
  jobs: JobChange[];
  /** The rows of the job asked for (none when it was not asked for, or is not on this site). */
  jobRows: JobTargetRow[];
};

const changedSince = (alias: string) =>
  `${alias}.change_xid >= pg_snapshot_xmin(?::pg_snapshot) and not pg_visible_in_snapshot(${alias}.change_xid, ?::pg_snapshot)`;

/**
 * One statement: the site's time zone and fleet version, the statement's snapshot, and the driver actors and jobs
 * whose `change_xid` (migration 0019) `since` does not see, i.e. every change committed after `since` was taken,
 * in whatever order the writers committed. Positions are not stamped per row (migration 0020: that made every fix a
 * non-HOT update): the drivers named by the `driver_position_change` rows `since` does not see are read too. When
 * the location tracker has pruned log rows `since` may not have seen, a second statement reads every driver actor.
 * With `since` null: all of them (the first read of a process). With `jobId`, the job the decision is for too
 * (`jobRows`, as {@link JOB_TARGET_SQL} reads it), in the same round trip.
 */
export async function readSiteHead(em: EntityManager, siteId: string, since: string | null, jobId?: string): Promise<SiteHead> {
  const open = "j.phase in ('assigned', 'in_progress') and j.deleted_at is null";
  const stateFilter = since === null ? '' : ` and d.user_id in (${CHANGED_DRIVERS})`;
  const jobFilter = since === null ? ` and ${open} and j.driver_user_id is not null` : ` and ${changedSince('j')}`;
  const sinceParams = since === null ? [] : [since, since];
  const lost = since === null ? 'false' : 'exists (select 1 from driver_position_horizon h where h.site_id = s.id and h.pruned_through >= pg_snapshot_xmin(?::pg_snapshot))';
  const [row] = await em.execute<{ timezone: string | null; version: string | null; row_xmin: string | null; snapshot: string; own_xid: string | null; states: StateChange[]; positions_lost: boolean; jobs: JobChange[]; job_rows?: JobTargetRow[] }[]>(
    `select s.timezone, v.version::text as version, v.xmin::text as row_xmin, pg_current_snapshot()::text as snapshot,
       pg_current_xact_id_if_assigned()::text as own_xid,
       (select coalesce(json_agg(json_build_array(d.user_id, d.availability, d.last_lat, d.last_lng)), '[]'::json)
          from driver_state d where d.site_id = s.id${stateFilter}) as states,
       ${lost} as positions_lost,
       (select coalesce(json_agg(json_build_array(j.id, case when ${open} then j.driver_user_id end)), '[]'::json)
          from job j where j.site_id = s.id${jobFilter}) as jobs${jobId === undefined ? '' : `,
       (select coalesce(json_agg(t order by t.sort_order), '[]'::json) from (${JOB_TARGET_SQL}) t) as job_rows`}
     from site s left join dispatch_fleet_version v on v.site_id = s.id where s.id = ?`,
    [...sinceParams, ...sinceParams, ...(since === null ? [] : [since]), ...sinceParams, ...(jobId === undefined ? [] : [siteId, jobId, siteId]), siteId],
  );
  if (!row) throw new Error(`site ${siteId} is not visible in this transaction`);
  return {
    timezone: row.timezone || 'UTC',
    fleetKey: `${row.version ?? 0}:${row.row_xmin ?? ''}`,
    snapshot: row.snapshot,
    ownXid: row.own_xid,
    states: row.positions_lost ? await readAllStates(em, siteId) : row.states,
    jobs: row.jobs,
    jobRows: row.job_rows ?? [],
  };
}

/**
 * The drivers changed since the snapshot `?`: actors stamped with a newer `change_xid`, and drivers named by a newer
 * position log row (migration 0020). Four parameters: the snapshot, four times.
 */
const CHANGED_DRIVERS = `select c.user_id from driver_state c where c.site_id = s.id and ${changedSince('c')}
  union select unnest(p.user_ids) from driver_position_change p where p.site_id = s.id and ${changedSince('p')}`;

/**
 * Every driver actor of the site: for a reader whose snapshot is older than the position log's pruning (an idle
 * process). Read after the head, so possibly newer than its snapshot: the next read asks again for what changed
 * after that snapshot and gets the rows as they are then, so the index never goes back to an older value.
 */
async function readAllStates(em: EntityManager, siteId: string): Promise<StateChange[]> {
  const [row] = await em.execute<{ states: StateChange[] }[]>(
    `select coalesce(json_agg(json_build_array(d.user_id, d.availability, d.last_lat, d.last_lng)), '[]'::json) as states
     from driver_state d where d.site_id = ?`,
    [siteId],
  );
  return row?.states ?? [];
}

type SlowRow = {
  user_id: string; email: string; first_name: string | null; last_name: string | null; display_name: string | null;
  operational_status: string; profile_active: boolean; default_vehicle_id: string | null; vehicle_type: string | null;
  team_ids: string[]; zone_ids: string[]; max_load: number | null; weekly: WorkerScheduleData['weekly'] | null; exceptions: WorkerScheduleData['exceptions'] | null;
};

/** The same join and naming rules as `loadDriverFacts`, without the actor state and the loads; ordered by user id. */
export async function loadSlowFacts(em: EntityManager, siteId: string): Promise<SlowFacts[]> {
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
