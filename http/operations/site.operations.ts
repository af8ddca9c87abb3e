import { Type } from 'typebox';
import { createSite, getSite, searchSites, updateSite } from '../../engine/admin/site.service.ts';
import { ApiError } from '../errors.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, Id, IdQuery } from '../schemas/common.schema.ts';
import { CreateSiteBody, SiteResponse, toSiteResponse, UpdateSiteBody } from '../schemas/site.schema.ts';

const SORTABLE = { name: 'name', subdomain: 'subdomain', created_at: 'createdAt', updated_at: 'updatedAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200 })),
    organization_id: Type.Optional(Id),
    is_active: Type.Optional(Type.Boolean()),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

/** Fields only the platform operator may change: they move or switch off the tenant itself. */
const PLATFORM_ONLY_FIELDS = ['subdomain', 'is_active'] as const;

export const siteOperations = [
  defineOperation({
    id: 'site.create',
    method: 'POST',
    path: '/site',
    summary: 'Create a site (a tenant, served at <subdomain>.<base domain>)',
    tag: 'Administration',
    access: 'site.create',
    host: 'platform',
    body: CreateSiteBody,
    status: 201,
    response: DataResponse(SiteResponse),
    handler: async ({ body, actor, transaction }) => ({
      data: toSiteResponse(await transaction((em) => createSite(em, actor, body))),
    }),
  }),
  defineOperation({
    id: 'site.get',
    method: 'GET',
    path: '/site',
    summary: 'Get a site (on a site host: only that site)',
    tag: 'Administration',
    access: 'site.read',
    host: 'any',
    query: IdQuery,
    response: DataResponse(SiteResponse),
    handler: async ({ query, site, transaction }) => {
      if (site && site.id !== query.id) throw ApiError.notFound('Site', query.id);
      return { data: toSiteResponse(await transaction((em) => getSite(em, query.id))) };
    },
  }),
  defineOperation({
    id: 'site.update',
    method: 'PUT',
    path: '/site',
    summary: 'Update a site: supplied fields change, null clears',
    description: 'A site admin may update their own site; subdomain and is_active are the platform operator\'s.',
    tag: 'Administration',
    access: 'site.update',
    host: 'any',
    body: UpdateSiteBody,
    response: DataResponse(SiteResponse),
    handler: async ({ body, site, principal, actor, services, transaction }) => {
      if (site && site.id !== body.id) throw ApiError.notFound('Site', body.id);
      const forbidden = PLATFORM_ONLY_FIELDS.filter((field) => body[field] !== undefined);
      if (principal?.role !== 'platform' && forbidden.length > 0) {
        throw new ApiError(403, 'FORBIDDEN_FIELD', `Only the platform operator may change ${forbidden.join(', ')}`);
      }
      const updated = await transaction((em) => updateSite(em, actor, site?.id ?? null, body));
      services.sites.invalidate();
      await services.credentials.invalidate();
      return { data: toSiteResponse(updated) };
    },
  }),
  defineOperation({
    id: 'site.search',
    method: 'GET',
    path: '/site/search',
    summary: 'Search sites by name or subdomain',
    tag: 'Administration',
    access: 'site.search',
    host: 'platform',
    query: SearchQuery,
    response: SearchResponse(SiteResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'name');
      const [rows, total] = await transaction((em) =>
        searchSites(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toSiteResponse), total, paging);
    },
  }),
];
