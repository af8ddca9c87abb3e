import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../domain-error.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import { parseAccessWindow } from '../mapping/access-window.ts';
import { transportModeFor, type LatLng, type TransportMode } from '../mapping/mapping-provider.ts';
import { assertRouteOpen } from './route-records.ts';
import { routeFromRow, TERMINAL_PHASES, type RouteRecord } from './route-view.ts';

/**
 * Time at each stop when its job's service type sets none: five minutes, the usual hand-over of a parcel or a
 * signature (documented in the README, "Route optimization").
 */
export const DEFAULT_STOP_SERVICE_SECONDS = 300;

/** A stop of the route as the optimizer needs it. Times are epoch milliseconds. */
export type OptimizeStop = {
  id: string;
  job_id: string;
  type: string;
  /** Completed or cancelled: keeps its place at the front of the route. */
  closed: boolean;
  point: LatLng;
  serviceSeconds: number;
  completeAfter: number | null;
  completeBefore: number | null;
};

/** What optimizing a route reads, in one short transaction (the map and the search run after it has ended). */
export type RouteSnapshot = {
  route: RouteRecord;
  /** Every stop of the route's jobs, in the route's current order. */
  stops: OptimizeStop[];
  /** The driver's last known position, for a route in progress; null otherwise or when unknown. */
  driverPosition: LatLng | null;
  mode: TransportMode;
  /** The clock's origin: now for a route under way (or due), else the start of its service day in the site's zone. */
  departure: Date;
};

type StopRow = {
  id: string;
  job_id: string;
  type: string;
  phase: string;
  lat: number;
  lng: number;
  complete_after: Date | string | null;
  complete_before: Date | string | null;
  default_duration_seconds: number | null;
};

const epoch = (value: Date | string | null) => (value === null ? null : new Date(value).getTime());

/**
 * Reads a route of the site for optimizing: its stops in order (with where they are, their windows and service
 * times), the driver's position when the route is in progress, and its vehicle's transport mode.
 * @param em scoped to the site
 * @throws DomainError 404 NOT_FOUND naming route_id (another site's route too), 409 ROUTE_CLOSED
 */
export async function loadRouteSnapshot(em: EntityManager, siteId: string, routeId: string, now: Date, timeZone: string): Promise<RouteSnapshot> {
  const [row] = await em.execute<EntityRow[]>('select * from route where id = ? and site_id = ?', [routeId, siteId]);
  if (!row) throw new DomainError(404, 'NOT_FOUND', `Route ${routeId} not found`, 'route_id');
  const route = routeFromRow(row);
  assertRouteOpen(route);
  // The same order as the route's reorder check reads (routeStopOrder), so the new order lines up with it.
  const rows = await em.execute<StopRow[]>(
    `select s.id, s.job_id, s.type, s.phase, a.lat, a.lng, s.complete_after, s.complete_before, st.default_duration_seconds
     from job j join stop s on s.job_id = j.id
     left join route_stop rs on rs.stop_id = s.id and rs.route_id = j.route_id
     join address a on a.id = s.address_id
     left join service_type st on st.id = j.service_type_id and st.site_id = j.site_id
     where j.route_id = ? and j.site_id = ? and j.deleted_at is null
     order by rs.position nulls last, j.created_at, j.id, s.sort_order`,
    [routeId, siteId],
  );
  const stops = rows.map(
    (s): OptimizeStop => ({
      id: s.id,
      job_id: s.job_id,
      type: s.type,
      closed: TERMINAL_PHASES.has(s.phase),
      point: { lat: Number(s.lat), lng: Number(s.lng) },
      serviceSeconds: s.default_duration_seconds ?? DEFAULT_STOP_SERVICE_SECONDS,
      completeAfter: epoch(s.complete_after),
      completeBefore: epoch(s.complete_before),
    }),
  );
  const inProgress = route.phase === 'in_progress';
  return {
    route,
    stops,
    driverPosition: inProgress && route.driverUserId ? await driverPosition(em, siteId, route.driverUserId) : null,
    mode: await vehicleMode(em, siteId, route.vehicleId),
    departure: inProgress ? now : new Date(Math.max(now.getTime(), dayStart(route.serviceDate, timeZone))),
  };
}

async function driverPosition(em: EntityManager, siteId: string, userId: string): Promise<LatLng | null> {
  const [state] = await em.execute<{ last_lat: number | null; last_lng: number | null }[]>(
    'select last_lat, last_lng from driver_state where site_id = ? and user_id = ?',
    [siteId, userId],
  );
  return state && state.last_lat !== null && state.last_lng !== null ? { lat: Number(state.last_lat), lng: Number(state.last_lng) } : null;
}

async function vehicleMode(em: EntityManager, siteId: string, vehicleId: string | null): Promise<TransportMode> {
  if (!vehicleId) return 'car';
  const [vehicle] = await em.execute<{ type: string }[]>('select type from vehicle where id = ? and site_id = ?', [vehicleId, siteId]);
  return vehicle ? transportModeFor(vehicle.type) : 'car';
}

/** Local midnight of a `YYYY-MM-DD` day in the site's zone (noon UTC names that local day in every zone within ±12 h). */
function dayStart(serviceDate: string, timeZone: string): number {
  return parseAccessWindow('00:00-24:00', new Date(`${serviceDate}T12:00:00Z`), timeZone, 'service_date')[0]!.start;
}
