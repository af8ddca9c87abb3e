import { DomainError } from '../domain-error.ts';
import { readPage, type PageRequest } from '../runtime/paged-read.ts';
import type { TenantRead } from '../runtime/tenant-read.ts';
import type { DispatchMethod, DispatchStatus } from './dispatch-types.ts';
import type { DispatchRow } from './dispatch-record.ts';

/**
 * A dispatch record of the site, its decision included, through `read` (in one round trip, `tenantRead`).
 * @throws DomainError 404
 */
export async function getDispatch(read: TenantRead, siteId: string, id: string): Promise<DispatchRow> {
  const [row] = await read('select * from dispatch where id = ? and site_id = ?', [id, siteId]);
  if (!row) throw new DomainError(404, 'NOT_FOUND', `Dispatch ${id} not found`, 'id');
  return row as DispatchRow;
}

export type DispatchFilter = { job_id?: string; route_id?: string; team_id?: string; driver_id?: string; method?: DispatchMethod; status?: DispatchStatus; is_active?: boolean };

/** The sortable columns of dispatch records (`readPaging` gives them as its order, ties broken by `id`). */
const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', id: 'id' };

/**
 * One page of the site's dispatch records matching every filter, in `page.orderBy`'s order, and the total count:
 * one statement in one round trip (`readPage`).
 */
export async function searchDispatches(
  read: TenantRead,
  siteId: string,
  filter: DispatchFilter,
  page: PageRequest,
): Promise<[DispatchRow[], number]> {
  const where = ['d.site_id = ?'];
  const params: unknown[] = [siteId];
  const add = (column: string, value: unknown) => {
    if (value === undefined) return;
    where.push(`d.${column} = ?`);
    params.push(value);
  };
  add('job_id', filter.job_id);
  add('route_id', filter.route_id);
  add('team_id', filter.team_id);
  add('assigned_to_driver_id', filter.driver_id);
  add('method', filter.method);
  add('status', filter.status);
  add('is_active', filter.is_active);
  const order = Object.entries(page.orderBy).map(([column, direction]) => `d.${SORT_COLUMNS[column] ?? 'id'} ${direction}`).join(', ');
  const [rows, total] = await readPage(read, siteId, { table: 'dispatch', alias: 'd', where, params, order }, page);
  return [rows as DispatchRow[], total];
}
