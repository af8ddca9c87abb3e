import type { EntityManager } from '@mikro-orm/postgresql';
import { nameOnFile } from '../admin/user-name.ts';
import type { Availability } from '../../machines/driver-availability.machine.ts';
import { DomainError } from '../domain-error.ts';
import type { WorkerScheduleData } from '../fleet/schedule.ts';
import { windowOf, type Window } from './job-target.ts';

/** Everything a decision knows about one driver, read in one statement (plus the busy windows when asked). */
export type DriverFacts = {
  userId: string;
  name: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  /** The worker is active and so are their driver profile and their account. */
  active: boolean;
  operationalStatus: string;
  availability: Availability;
  position: { lat: number; lng: number } | null;
  defaultVehicleId: string | null;
  vehicleType: string | null;
  teamIds: string[];
  zoneIds: string[];
  maxLoad: number | null;
  load: number;
  schedule: WorkerScheduleData | null;
  /** Time windows of the driver's open jobs (only filled when the decision checks conflicts). */
  busy: Window[];
};

export type DriverScope = { teamId?: string; userIds?: string[]; withBusyWindows?: boolean; excludeJobId?: string };

type Row = {
  user_id: string; email: string; first_name: string | null; last_name: string | null; display_name: string | null;
  operational_status: string; profile_active: boolean; availability: Availability | null; last_lat: number | null; last_lng: number | null;
  default_vehicle_id: string | null; vehicle_type: string | null; team_ids: string[]; zone_ids: string[]; max_load: number | null;
  load: string | number | null; weekly: WorkerScheduleData['weekly'] | null; exceptions: WorkerScheduleData['exceptions'] | null;
};

/**
 * The columns of a worker's facts that both readers (this one and the driver index's slow facts) select, and the
 * joins they come from (`w` worker, `p` driver profile, `u` user, `v` default vehicle, `ws` schedule). A default
 * vehicle that was switched off is no vehicle: its id would otherwise go on the dispatch and the route (spec: a
 * direct assignment needs a vehicle). A user whose account the platform switched off counts as an inactive profile.
 */
export const WORKER_FACT_COLUMNS = `w.user_id, u.email, u.first_name, u.last_name, u.display_name, w.operational_status,
  (p.is_active and u.is_active) as profile_active, case when v.id is not null then w.default_vehicle_id end as default_vehicle_id,
  v.type as vehicle_type, w.team_ids, w.zone_ids, w.max_load, ws.weekly, ws.exceptions`;
export const WORKER_FACT_JOINS = `from worker w
  join user_profile p on p.site_id = w.site_id and p.user_id = w.user_id and p.role = 'driver'
  join app_user u on u.id = w.user_id
  left join vehicle v on v.site_id = w.site_id and v.id = w.default_vehicle_id and v.is_active
  left join worker_schedule ws on ws.site_id = w.site_id and ws.user_id = w.user_id`;

/**
 * The site's workers with a driver profile (optionally one team's, or named ones), ordered by user id, with their
 * actor state (availability, last position), default vehicle type, schedule and load (open jobs: phase assigned
 * or in progress). Users without a worker record are not dispatch candidates: the worker record is where the
 * office says a person may be dispatched.
 */
export async function loadDriverFacts(em: EntityManager, siteId: string, scope: DriverScope = {}): Promise<DriverFacts[]> {
  const where: string[] = ['w.site_id = ?'];
  const params: unknown[] = [siteId];
  // Named drivers (a winner's re-check, a manual assignment): count only their jobs, not the site's.
  const loadFilter = scope.userIds ? ' and driver_user_id in (?)' : '';
  if (scope.userIds) {
    if (scope.userIds.length === 0) return [];
    params.push(scope.userIds);
  }
  params.push(siteId);
  if (scope.teamId) {
    where.push('w.team_ids @> ?::jsonb');
    params.push(JSON.stringify([scope.teamId]));
  }
  if (scope.userIds) {
    where.push('w.user_id in (?)');
    params.push(scope.userIds);
  }
  const rows = await em.execute<Row[]>(
    `with loads as (
       select driver_user_id, count(*) as load from job
       where site_id = ? and phase in ('assigned', 'in_progress') and deleted_at is null and driver_user_id is not null${loadFilter}
       group by driver_user_id)
     select ${WORKER_FACT_COLUMNS}, ds.availability, ds.last_lat, ds.last_lng, l.load
     ${WORKER_FACT_JOINS}
     left join driver_state ds on ds.site_id = w.site_id and ds.user_id = w.user_id
     left join loads l on l.driver_user_id = w.user_id
     where ${where.join(' and ')} order by w.user_id asc`,
    params,
  );
  const facts = rows.map(toFacts);
  if (scope.withBusyWindows && facts.length > 0) await addBusyWindows(em, siteId, facts, scope.excludeJobId, scope.userIds);
  return facts;
}

function toFacts(row: Row): DriverFacts {
  // Staff read these names (dispatch answers, the available-drivers list), who may see the email.
  const name = nameOnFile(row) ?? row.email;
  return {
    userId: row.user_id,
    name,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    active: row.operational_status === 'active' && row.profile_active,
    operationalStatus: row.operational_status,
    availability: row.availability ?? 'offline',
    position: row.last_lat === null || row.last_lng === null ? null : { lat: Number(row.last_lat), lng: Number(row.last_lng) },
    defaultVehicleId: row.default_vehicle_id,
    vehicleType: row.vehicle_type,
    teamIds: row.team_ids,
    zoneIds: row.zone_ids,
    maxLoad: row.max_load,
    load: Number(row.load ?? 0),
    // A schedule row always has its exceptions (not null); its weekly may be null (no weekly restriction).
    schedule: row.exceptions ? { weekly: row.weekly, exceptions: row.exceptions } : null,
    busy: [],
  };
}

/** The time windows of the drivers' open jobs (of the named drivers only, when given), for the conflict check. */
export async function addBusyWindows(em: EntityManager, siteId: string, facts: DriverFacts[], excludeJobId: string | undefined, userIds?: string[]): Promise<void> {
  const windows = await busyWindows(em, siteId, excludeJobId, userIds);
  for (const driver of facts) driver.busy.push(...(windows.get(driver.userId) ?? []));
}

/** The time windows of open jobs (but `excludeJobId`), by driver; of the named drivers only, when given. */
export async function busyWindows(em: EntityManager, siteId: string, excludeJobId: string | undefined, userIds?: string[]): Promise<Map<string, Window[]>> {
  const rows = await em.execute<{ driver_user_id: string; after: Date | null; before: Date | null }[]>(
    `select j.driver_user_id, min(s.complete_after) as after, max(s.complete_before) as before
     from job j join stop s on s.job_id = j.id and s.site_id = j.site_id
     where j.site_id = ? and j.phase in ('assigned', 'in_progress') and j.deleted_at is null and j.driver_user_id is not null and j.id <> ?
       and (s.complete_after is not null or s.complete_before is not null)${userIds ? ' and j.driver_user_id in (?)' : ''}
     group by j.id, j.driver_user_id`,
    userIds ? [siteId, excludeJobId ?? '', userIds] : [siteId, excludeJobId ?? ''],
  );
  const byDriver = new Map<string, Window[]>();
  for (const row of rows) {
    const window = windowOf([{ after: row.after, before: row.before }]);
    if (!window) continue;
    const list = byDriver.get(row.driver_user_id) ?? [];
    list.push(window);
    byDriver.set(row.driver_user_id, list);
  }
  return byDriver;
}

/**
 * The worker a dispatch names, with the vehicle it would go out with (the one given, else the driver's default):
 * checked when a dispatch is stored for later too, so that a request that could never be carried out is refused at
 * once rather than failing at its time.
 * @throws DomainError 404 driver_id, 422 VEHICLE_REQUIRED
 */
export async function driverWithVehicle(em: EntityManager, siteId: string, request: { driver_id: string; vehicle_id?: string | null }): Promise<DriverFacts & { vehicleId: string }> {
  const [driver] = await loadDriverFacts(em, siteId, { userIds: [request.driver_id] });
  if (!driver) throw new DomainError(404, 'NOT_FOUND', `Driver ${request.driver_id} is not a worker of this site`, 'driver_id');
  const vehicleId = request.vehicle_id ?? driver.defaultVehicleId;
  if (!vehicleId) throw new DomainError(422, 'VEHICLE_REQUIRED', `Driver ${driver.userId} has no default vehicle: give vehicle_id`, 'vehicle_id');
  return { ...driver, vehicleId };
}
