import type { EntityManager } from '@mikro-orm/postgresql';
import { nameOnFile } from '../admin/user-name.ts';
import { transportModeFor, type LatLng, type TransportMode } from '../mapping/mapping-provider.ts';

/** The driver an assigned job's ETAs are measured from; `name` is what the job's customer is told. */
export type EtaDriver = { userId: string; name: string; position: LatLng | null; mode: TransportMode };

type Row = {
  id: string; first_name: string | null; last_name: string | null; display_name: string | null;
  last_lat: number | null; last_lng: number | null; vehicle_type: string | null;
};

/**
 * A driver's last known position (the driver actor's `driver_state`) and transport mode: the type of the vehicle
 * they drive now, that is the vehicle of their open route (the one under way first, else the earliest), which a
 * dispatch's `vehicle_id` sets; else their default vehicle's; a car without either. A cargo bike given for the day
 * was timed as the default van before, and its customers were told twice too early. Unlike dispatch's candidates,
 * an assigned driver needs no worker record: a job can name its driver directly. Null when the user does not exist.
 */
export async function loadEtaDriver(em: EntityManager, siteId: string, userId: string): Promise<EtaDriver | null> {
  const [row] = await em.execute<Row[]>(
    `select u.id, u.first_name, u.last_name, u.display_name, ds.last_lat, ds.last_lng, v.type as vehicle_type
     from app_user u
     left join driver_state ds on ds.site_id = ? and ds.user_id = u.id
     left join worker w on w.site_id = ? and w.user_id = u.id
     left join lateral (select r.vehicle_id from route r
       where r.site_id = ? and r.driver_user_id = u.id and r.phase in ('assigned', 'in_progress') and r.vehicle_id is not null
       order by r.phase = 'in_progress' desc, r.service_date, r.created_at limit 1) driving on true
     left join vehicle v on v.site_id = ? and v.id = coalesce(driving.vehicle_id, w.default_vehicle_id) and v.is_active
     where u.id = ?`,
    [siteId, siteId, siteId, siteId, userId],
  );
  if (!row) return null;
  return {
    userId: row.id,
    // The customer may not see the driver's email: a driver without a name is "Your driver" to them.
    name: nameOnFile(row) ?? 'Your driver',
    position: row.last_lat === null || row.last_lng === null ? null : { lat: Number(row.last_lat), lng: Number(row.last_lng) },
    mode: transportModeFor(row.vehicle_type ?? 'car'),
  };
}
