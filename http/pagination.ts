import { Type, type TSchema } from 'typebox';
import { ApiError } from './errors.ts';

/** per_page / page_size above this are clamped to it. */
export const MAX_PAGE_SIZE = 100;
const DEFAULT_PAGE_SIZE = 20;
/** The highest page a list or search takes. */
const MAX_PAGE = 1_000_000;
/** A page number, in a query or a body: at most a million, as a larger one would put the offset past PostgreSQL's bigint (a 500, not a 400). */
export const PageNumber = Type.Integer({ minimum: 1, maximum: MAX_PAGE });

/**
 * The page parameters: `page` with `per_page` or `page_size`; alone, the query of a short list read whole and kept in
 * its own order (a catalog, a site's providers: paged, not sortable, `pageOfWholeList`).
 */
export const pageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, description: `default ${DEFAULT_PAGE_SIZE}, clamped to ${MAX_PAGE_SIZE}` })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, description: 'alias of per_page' })),
};

/** A page of a list read whole, as `{data, meta: {total, page, per_page}}` like every list. */
export function pageOfWholeList<T>(items: T[], input: PagingInput) {
  const perPage = Math.min(input.per_page ?? input.page_size ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const page = input.page ?? 1;
  const offset = (page - 1) * perPage;
  return listBody(items.slice(offset, offset + perPage), items.length, { page, perPage, offset, orderBy: {} });
}

/**
 * Paging and sorting query parameters, both forms of each: `page` with `per_page` or `page_size`; `sort=-field`
 * or `sort_by=field&sort_order=desc`. `sortable` maps API field names to entity properties.
 */
export function pagingQuery(sortable: Record<string, string>) {
  const fields = Object.keys(sortable);
  return {
    ...pageQuery,
    sort: Type.Optional(Type.String({ description: `one of ${fields.join(', ')}; prefix - for descending` })),
    sort_by: Type.Optional(Type.Union(fields.map((f) => Type.Literal(f)))),
    sort_order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  };
}

export type PagingInput = {
  page?: number;
  per_page?: number;
  page_size?: number;
  sort?: string;
  sort_by?: string;
  sort_order?: 'asc' | 'desc';
};

export type Paging = {
  page: number;
  perPage: number;
  offset: number;
  orderBy: Record<string, 'asc' | 'desc'>;
};

/**
 * Resolves paging input to limit/offset and an ORM order-by (ties broken by id, so pages never overlap).
 * @throws ApiError 400 INVALID_SORT for a field that is not sortable
 */
export function readPaging(input: PagingInput, sortable: Record<string, string>, defaultSort: string): Paging {
  const perPage = Math.min(input.per_page ?? input.page_size ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const page = input.page ?? 1;
  const [field, direction] = parseSort(input, defaultSort);
  const property = sortable[field];
  if (!property) {
    throw ApiError.badRequest('INVALID_SORT', `Cannot sort by ${field}; sortable fields: ${Object.keys(sortable).join(', ')}`, [
      { field: input.sort ? 'sort' : 'sort_by', message: `unknown sort field ${field}` },
    ]);
  }
  const orderBy: Record<string, 'asc' | 'desc'> = { [property]: direction };
  if (property !== 'id') orderBy.id = direction;
  return { page, perPage, offset: (page - 1) * perPage, orderBy };
}

function parseSort(input: PagingInput, defaultSort: string): [string, 'asc' | 'desc'] {
  if (input.sort) return input.sort.startsWith('-') ? [input.sort.slice(1), 'desc'] : [input.sort, 'asc'];
  if (input.sort_by) return [input.sort_by, input.sort_order ?? 'asc'];
  return defaultSort.startsWith('-') ? [defaultSort.slice(1), 'desc'] : [defaultSort, 'asc'];
}

const ListMeta = Type.Object(
  { total: Type.Integer(), page: Type.Integer(), per_page: Type.Integer() },
  { additionalProperties: false },
);

const SearchMeta = Type.Object(
  {
    pagination: Type.Object(
      {
        page: Type.Integer(),
        pageSize: Type.Integer(),
        totalItems: Type.Integer({ format: 'int64' }),
        totalPages: Type.Integer(),
        total_pages: Type.Integer({ description: 'same as totalPages (the spec names both)' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** `{data, meta: {total, page, per_page}}` */
export function ListResponse<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: ListMeta }, { additionalProperties: false });
}

/** `{data, meta: {pagination: {page, pageSize, totalItems, totalPages}}}` */
export function SearchResponse<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: SearchMeta }, { additionalProperties: false });
}

export function listBody<T>(data: T[], total: number, paging: Paging) {
  return { data, meta: { total, page: paging.page, per_page: paging.perPage } };
}

export function searchBody<T>(data: T[], total: number, paging: Paging) {
  const totalPages = Math.ceil(total / paging.perPage);
  return {
    data,
    meta: {
      pagination: { page: paging.page, pageSize: paging.perPage, totalItems: total, totalPages, total_pages: totalPages },
    },
  };
}
