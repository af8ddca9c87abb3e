import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Time at a stop when the job's service type has no default duration: five minutes (parking, a signature).
 * A service type's `default_duration_seconds` is the whole job's time on site, shared evenly by its stops.
 */
export const DEFAULT_STOP_SERVICE_SECONDS = 300;

/** One stop still to visit, with what an ETA and a notification about it need. */
export type ItineraryStop = {
  stopId: string;
  jobId: string;
  /** 0-based place of the stop in its job (by the job's stop order, completed stops included). */
  stopIndex: number;
  type: string;
  lat: number;
  lng: number;
  address: string;
  serviceSeconds: number;
  /** When the stop's time window opens: a driver there sooner waits for it. */
  completeAfter: Date | null;
  /** The start of its route's service day (site time), while the route has not started: not driven before then. */
  routeDayStart: Date | null;
  customerUserId: string | null;
  contactName: string | null;
  contactPhone: string | null;
};

type Row = {
  stop_id: string; job_id: string; stop_index: string | number; type: string; lat: number; lng: number; address: string;
  default_duration_seconds: number | null; job_stop_count: string | number; customer_user_id: string | null; complete_after: Date | string | null;
  contact_name: string | null; contact_phone: string | null; route_day_start: Date | string | null;
};

const OPEN_STOP = `s.phase not in ('completed', 'cancelled')`;

/**
 * A driver's open stops in the order they will be driven: the stops of their assigned and in-progress jobs, day by
 * day (a route's service date; for a job on no route, the day its first window opens, else today), then route by
 * route (the one started first, then the older), each in its route order, then jobs on no route, oldest first, each
 * in its stop order. Positions are numbered per route: ordered by position alone, two routes of one day were driven
 * a stop of each in turn; and a job on no route put after tomorrow's route waited for its windows.
 */
export async function driverItinerary(em: EntityManager, siteId: string, driverUserId: string): Promise<ItineraryStop[]> {
  return readStops(
    em,
    `j.site_id = ? and j.driver_user_id = ? and j.phase in ('assigned', 'in_progress') and j.deleted_at is null`,
    [siteId, driverUserId],
    `coalesce(r.service_date, to_char((select min(c.complete_after) from stop c where c.job_id = j.id and c.site_id = j.site_id), 'YYYY-MM-DD'), to_char(now(), 'YYYY-MM-DD')),
     r.started_at nulls last, r.created_at, r.id, rs.position nulls last, j.created_at, j.id, s.sort_order`,
  );
}

/** A job's open stops in its stop order (an unassigned job's, measured from a candidate driver). */
export async function jobItinerary(em: EntityManager, siteId: string, jobId: string): Promise<ItineraryStop[]> {
  return readStops(em, 'j.site_id = ? and j.id = ? and j.deleted_at is null', [siteId, jobId], 's.sort_order');
}

async function readStops(em: EntityManager, where: string, params: unknown[], orderBy: string): Promise<ItineraryStop[]> {
  const rows = await em.execute<Row[]>(
    `select s.id as stop_id, s.job_id, s.type, s.contact_name, s.contact_phone, s.complete_after, a.lat, a.lng, a.formatted_name as address,
       st.default_duration_seconds, j.customer_user_id,
       case when r.started_at is null then r.service_date::date::timestamp at time zone coalesce(nullif(si.timezone, ''), 'UTC') end as route_day_start,
       (select count(*) from stop c where c.job_id = s.job_id and c.site_id = s.site_id and c.sort_order < s.sort_order) as stop_index,
       (select count(*) from stop c where c.job_id = s.job_id and c.site_id = s.site_id) as job_stop_count
     from job j
     join stop s on s.job_id = j.id and s.site_id = j.site_id
     join address a on a.id = s.address_id
     left join service_type st on st.id = j.service_type_id and st.site_id = j.site_id
     left join route r on r.id = j.route_id and r.site_id = j.site_id
     left join site si on si.id = j.site_id
     left join route_stop rs on rs.stop_id = s.id and rs.route_id = j.route_id
     where ${where} and ${OPEN_STOP}
     order by ${orderBy}`,
    params,
  );
  return rows.map((row) => ({
    stopId: row.stop_id,
    jobId: row.job_id,
    stopIndex: Number(row.stop_index),
    type: row.type,
    lat: Number(row.lat),
    lng: Number(row.lng),
    address: row.address,
    serviceSeconds: serviceSeconds(row.default_duration_seconds, Number(row.job_stop_count)),
    completeAfter: row.complete_after === null ? null : new Date(row.complete_after),
    routeDayStart: row.route_day_start === null ? null : new Date(row.route_day_start),
    customerUserId: row.customer_user_id,
    contactName: row.contact_name,
    contactPhone: row.contact_phone,
  }));
}

function serviceSeconds(jobDuration: number | null, stopCount: number): number {
  if (jobDuration === null || jobDuration === undefined) return DEFAULT_STOP_SERVICE_SECONDS;
  return Math.round(Number(jobDuration) / Math.max(1, stopCount));
}
