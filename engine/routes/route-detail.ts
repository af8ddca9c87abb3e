import type { EntityManager } from '@mikro-orm/postgresql';
import { createMappingProvider } from '../mapping/create-mapping-provider.ts';
import { transportModeFor, type MappingProvider } from '../mapping/mapping-provider.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { toRouteData, type RouteRecord } from './route-view.ts';

type StopLine = {
  id: string;
  job_id: string;
  route_id: string;
  type: string;
  workflow_state_id: string;
  phase: string;
  address_id: string;
  formatted_name: string;
  lat: number;
  lng: number;
};

/** A stop as a route lists it: its place in the route (1..n), its job, and where it is. */
function toRouteStop(stop: StopLine, order: number) {
  return {
    id: stop.id,
    job_id: stop.job_id,
    type: stop.type,
    order,
    workflow_state_id: stop.workflow_state_id,
    phase: stop.phase,
    address: { id: stop.address_id, formatted_name: stop.formatted_name, point: { lat: Number(stop.lat), lng: Number(stop.lng) } },
  };
}

export type RouteStopView = ReturnType<typeof toRouteStop>;

// The site's mapping integration is not wired to routes yet: the offline estimate is what every site gets today.
const defaultMapping: MappingProvider = createMappingProvider(null);

/**
 * Routes as the API shows them: their own fields, their jobs in order, their stops in order (the stops of a job
 * that joined the route keep their `route_stop` place; a stop added to such a job later comes after the ordered
 * ones), and the planned distance and travel time along the open stops in that order (the vehicle's type picks the
 * transport mode; a car without one). Four queries whatever the number of routes.
 */
export async function routeViews(em: EntityManager, siteId: string, routes: RouteRecord[], mapping: MappingProvider = defaultMapping) {
  if (routes.length === 0) return [];
  const ids = routes.map((r) => r.id);
  const stops = await em.execute<StopLine[]>(
    `select s.id, s.job_id, j.route_id, s.type, s.workflow_state_id, s.phase, a.id as address_id, a.formatted_name, a.lat, a.lng
     from job j join stop s on s.job_id = j.id
     left join route_stop rs on rs.stop_id = s.id and rs.route_id = j.route_id
     join address a on a.id = s.address_id
     where j.route_id in (?) and j.site_id = ? and j.deleted_at is null
     order by rs.position nulls last, j.created_at, j.id, s.sort_order`,
    [ids, siteId],
  );
  const jobless = await em.execute<{ id: string; route_id: string }[]>(
    `select j.id, j.route_id from job j where j.route_id in (?) and j.site_id = ? and j.deleted_at is null
     and not exists (select 1 from stop s where s.job_id = j.id) order by j.created_at, j.id`,
    [ids, siteId],
  );
  const vehicleIds = [...new Set(routes.map((r) => r.vehicleId).filter((id): id is string => id !== null))];
  const vehicles =
    vehicleIds.length === 0 ? [] : await em.execute<{ id: string; type: string }[]>('select id, type from vehicle where id in (?) and site_id = ?', [vehicleIds, siteId]);
  const modeOf = new Map(vehicles.map((v) => [v.id, transportModeFor(v.type)]));
  return Promise.all(
    routes.map(async (route) => {
      const own = stops.filter((s) => s.route_id === route.id);
      const jobIds = [...new Set([...own.map((s) => s.job_id), ...jobless.filter((j) => j.route_id === route.id).map((j) => j.id)])];
      const open = own.filter((s) => s.phase !== 'cancelled');
      const plan =
        open.length < 2
          ? { distance_meters: 0, duration_seconds: 0 }
          : await mapping.route({ waypoints: open.map((s) => ({ lat: Number(s.lat), lng: Number(s.lng), id: s.id })), mode: (route.vehicleId && modeOf.get(route.vehicleId)) || 'car' });
      return {
        ...toRouteData(route, await workflowById(em, route.workflowId)),
        job_ids: jobIds,
        stops: own.map((s, index) => toRouteStop(s, index + 1)),
        planned_distance_meters: Math.round(plan.distance_meters),
        planned_duration_seconds: Math.round(plan.duration_seconds),
      };
    }),
  );
}

export type RouteView = Awaited<ReturnType<typeof routeViews>>[number];
