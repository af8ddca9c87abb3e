import type { EntityManager } from '@mikro-orm/postgresql';
import { containsPattern } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';
import type { JobActor } from '../jobs/job-input.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import type { WorkflowLookup } from '../runtime/answer-at-commit.ts';
import { readPage } from '../runtime/paged-read.ts';
import type { TenantRead } from '../runtime/tenant-read.ts';
import { ROUTE_VIEW_COLUMNS, routeViewsOfRows, type RouteView } from './route-detail.ts';
import { routeFromRow, type RouteRecord } from './route-view.ts';

export type RouteFilter = {
  q?: string;
  driver_user_id?: string;
  vehicle_id?: string;
  team_id?: string;
  workflow_state_ids?: string[];
  phase?: string[];
  service_date_from?: string;
  service_date_to?: string;
};

/** Sortable API fields → route columns. */
export const ROUTE_SORTABLE = { service_date: 'service_date', name: 'name', created_at: 'created_at', updated_at: 'updated_at', id: 'id' };

/** A driver reads only the routes they drive; staff read every route of the site. */
function visibility(actor: JobActor): { sql: string; params: unknown[] } {
  return actor.role === 'driver' ? { sql: ' and driver_user_id = ?', params: [actor.userId] } : { sql: '', params: [] };
}

/** @throws DomainError 404 when absent, another site's, or (for a driver) not theirs */
export async function findVisibleRoute(em: EntityManager, siteId: string, actor: JobActor, id: string): Promise<RouteRecord> {
  const seen = visibility(actor);
  const [row] = await em.execute<EntityRow[]>(`select * from route where id = ? and site_id = ?${seen.sql}`, [id, siteId, ...seen.params]);
  if (!row) throw DomainError.notFound('Route', id);
  return routeFromRow(row);
}

/**
 * A route's view as `actor` may see it, in one statement through `read` (in one round trip, `tenantRead`).
 * @throws DomainError 404 when absent, another site's, or (for a driver) not theirs
 */
export async function readVisibleRoute(read: TenantRead, workflows: WorkflowLookup, siteId: string, actor: JobActor, id: string): Promise<RouteView> {
  const seen = visibility(actor);
  const rows = await read(`select r.*, ${ROUTE_VIEW_COLUMNS} from route r where id = ? and site_id = ?${seen.sql}`, [id, siteId, ...seen.params]);
  if (rows.length === 0) throw DomainError.notFound('Route', id);
  return (await routeViewsOfRows(rows, workflows))[0]!;
}

/**
 * The views of the routes matching every given filter (service dates inclusive), one page of them, and how many
 * match: one statement in one round trip (`readPage`), the view's columns read for the page only.
 */
export async function searchRouteViews(
  read: TenantRead,
  workflows: WorkflowLookup,
  siteId: string,
  actor: JobActor,
  filter: RouteFilter,
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[RouteView[], number]> {
  const seen = visibility(actor);
  const where = [`site_id = ?${seen.sql}`];
  const params: unknown[] = [siteId, ...seen.params];
  const add = (sql: string, value: unknown) => {
    where.push(sql);
    params.push(value);
  };
  if (filter.q) add(`name ilike ?`, containsPattern(filter.q));
  if (filter.driver_user_id) add('driver_user_id = ?', filter.driver_user_id);
  if (filter.vehicle_id) add('vehicle_id = ?', filter.vehicle_id);
  if (filter.team_id) add('team_id = ?', filter.team_id);
  if (filter.workflow_state_ids?.length) add('workflow_state_id in (?)', filter.workflow_state_ids);
  if (filter.phase?.length) add('phase in (?)', filter.phase);
  if (filter.service_date_from) add('service_date >= ?', filter.service_date_from);
  if (filter.service_date_to) add('service_date <= ?', filter.service_date_to);
  // Column names come from ROUTE_SORTABLE (readPaging refuses others), so they are safe to interpolate.
  const order = Object.entries(page.orderBy).map(([column, direction]) => `r.${column} ${direction === 'desc' ? 'desc' : 'asc'}`).join(', ');
  const [rows, total] = await readPage(read, siteId, { table: 'route', alias: 'r', columns: `, ${ROUTE_VIEW_COLUMNS}`, where, params, order }, page);
  return [await routeViewsOfRows(rows, workflows), total];
}
