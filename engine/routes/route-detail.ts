import type { EntityManager } from '@mikro-orm/postgresql';
import { createMappingProvider } from '../mapping/create-mapping-provider.ts';
import { transportModeFor, type MappingProvider } from '../mapping/mapping-provider.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import type { WorkflowLookup } from '../runtime/answer-at-commit.ts';
import { routeFromRow, toRouteData, type RouteRecord } from './route-view.ts';

type StopLine = {
  id: string;
  job_id: string;
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
 * What a route's view reads besides the route's own row, as columns of the route aliased `r` (JSON): its stops in
 * order with their addresses (the stops of a job that joined the route keep their `route_stop` place; a stop added
 * to such a job later comes after the ordered ones), its jobs without stops, and its vehicle's type.
 */
export const ROUTE_VIEW_COLUMNS = `(select coalesce(json_agg(json_build_object('id', s.id, 'job_id', s.job_id, 'type', s.type,
      'workflow_state_id', s.workflow_state_id, 'phase', s.phase, 'address_id', a.id, 'formatted_name', a.formatted_name, 'lat', a.lat, 'lng', a.lng)
      order by rs.position nulls last, j.created_at, j.id, s.sort_order), '[]'::json)
    from job j join stop s on s.job_id = j.id
    left join route_stop rs on rs.stop_id = s.id and rs.route_id = j.route_id
    join address a on a.id = s.address_id
    where j.route_id = r.id and j.site_id = r.site_id and j.deleted_at is null) as view_stops,
  (select coalesce(json_agg(j.id order by j.created_at, j.id), '[]'::json) from job j
    where j.route_id = r.id and j.site_id = r.site_id and j.deleted_at is null and not exists (select 1 from stop s where s.job_id = j.id)) as view_jobless,
  (select v.type from vehicle v where v.id = r.vehicle_id and v.site_id = r.site_id) as view_vehicle_type`;

/** A route's {@link ROUTE_VIEW_COLUMNS} as read. */
type ViewParts = { view_stops: StopLine[]; view_jobless: string[]; view_vehicle_type: string | null };

/**
 * Routes as the API shows them, from inside a transaction (a command's answer): their own fields, their jobs in
 * order, their stops in order, and the planned distance and travel time along the open stops in that order. One
 * query whatever the number of routes.
 */
export async function routeViews(em: EntityManager, siteId: string, routes: RouteRecord[], mapping: MappingProvider = defaultMapping) {
  if (routes.length === 0) return [];
  const rows = await em.execute<(ViewParts & { id: string })[]>(`select r.id, ${ROUTE_VIEW_COLUMNS} from route r where r.id in (?) and r.site_id = ?`, [routes.map((r) => r.id), siteId]);
  const parts = new Map(rows.map((row) => [row.id, row]));
  const workflows = (id: string) => workflowById(em, id);
  return Promise.all(routes.map((route) => routeView(route, parts.get(route.id) ?? { view_stops: [], view_jobless: [], view_vehicle_type: null }, workflows, mapping)));
}

/** The views of routes read with `r.*` and {@link ROUTE_VIEW_COLUMNS} (a read outside any transaction: `tenantRead`). */
export function routeViewsOfRows(rows: EntityRow[], workflows: WorkflowLookup, mapping: MappingProvider = defaultMapping) {
  return Promise.all(rows.map((row) => routeView(routeFromRow(row), row as unknown as ViewParts, workflows, mapping)));
}

/** One route's view: the planned distance along its open stops, by its vehicle's transport mode (a car without one). */
async function routeView(route: RouteRecord, parts: ViewParts, workflows: WorkflowLookup, mapping: MappingProvider) {
  const own = parts.view_stops;
  const jobIds = [...new Set([...own.map((s) => s.job_id), ...parts.view_jobless])];
  const open = own.filter((s) => s.phase !== 'cancelled');
  const mode = parts.view_vehicle_type ? transportModeFor(parts.view_vehicle_type) : 'car';
  const plan =
    open.length < 2
      ? { distance_meters: 0, duration_seconds: 0 }
      : await mapping.route({ waypoints: open.map((s) => ({ lat: Number(s.lat), lng: Number(s.lng), id: s.id })), mode });
  return {
    ...toRouteData(route, await workflows(route.workflowId)),
    job_ids: jobIds,
    stops: own.map((s, index) => toRouteStop(s, index + 1)),
    planned_distance_meters: Math.round(plan.distance_meters),
    planned_duration_seconds: Math.round(plan.duration_seconds),
  };
}

export type RouteView = Awaited<ReturnType<typeof routeViews>>[number];
