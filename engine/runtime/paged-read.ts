import type { ReadRow, TenantRead } from './tenant-read.ts';

/** A page of a search: how many rows from which, in which order (properties or columns with their directions, as the caller maps them). */
export type PageRequest = { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> };

/** A search of one of a site's tables: the table as `alias`, the conditions on it with their values, its order. */
export type PagedSearch = {
  table: 'job' | 'route' | 'dispatch' | 'worker';
  alias: string;
  /** The column that tells the site's rows apart (default `id`; a worker's is its `user_id`). */
  key?: string;
  /** Columns read besides `alias.*` (a row's nested rows as JSON, for instance), each with its leading comma. */
  columns?: string;
  where: string[];
  params: unknown[];
  /** The ORDER BY list on `alias` (column names from an allow-list), ending with a unique key so pages never overlap. */
  order: string;
};

/**
 * One page of a search, each row whole with `columns`, and how many rows match in all, in one statement through
 * `read` (in one round trip, `tenantRead`): the page's keys and the count of every match (`count(*) over ()`) are read
 * first, then each row of the page by its key, so the extra columns are computed for the page only. A page past the
 * last match costs a second statement, for the count. Sent inline: the text varies with the filters, and the plan
 * should fit their values.
 */
export async function readPage(read: TenantRead, siteId: string, search: PagedSearch, page: { limit: number; offset: number }): Promise<[ReadRow[], number]> {
  const { table, alias: a, where, params, order } = search;
  const key = search.key ?? 'id';
  const rows = await read(
    `select ${a}.*${search.columns ?? ''}, p.search_total from (
       select ${a}.${key}, count(*) over () as search_total, row_number() over (order by ${order}) as search_place
       from ${table} ${a} where ${where.join(' and ')} order by ${order} limit ? offset ?
     ) p join ${table} ${a} on ${a}.${key} = p.${key} and (${a}.site_id = ?) is true
     order by p.search_place`,
    [...params, page.limit, page.offset, siteId],
    { inline: true },
  );
  if (rows.length > 0) return [rows, Number(rows[0]!.search_total)];
  if (page.offset === 0) return [[], 0];
  const [count] = await read(`select count(*) as total from ${table} ${a} where ${where.join(' and ')}`, params, { inline: true });
  return [[], Number(count?.total ?? 0)];
}
