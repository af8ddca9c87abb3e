import { Type } from 'typebox';
import {
  createApplication,
  getApplication,
  searchApplications,
  updateApplication,
} from '../../engine/admin/application.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import {
  ApplicationResponse,
  CreateApplicationBody,
  toApplicationResponse,
  UpdateApplicationBody,
} from '../schemas/application.schema.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { SiteRoleSchema } from '../schemas/user.schema.ts';

const SORTABLE = { name: 'name', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200 })),
    role: Type.Optional(SiteRoleSchema),
    is_active: Type.Optional(Type.Boolean()),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

/** Site-scoped: operations run on a site host, so `siteId` is always the host's. */
function siteOf(site: { id: string } | null): string {
  if (!site) throw new Error('application operations are served on site hosts only');
  return site.id;
}

export const applicationOperations = [
  defineOperation({
    id: 'application.create',
    method: 'POST',
    path: '/application',
    summary: 'Create an API key with a role; the key is in this response only',
    tag: 'Administration',
    access: 'application.manage',
    host: 'site',
    body: CreateApplicationBody,
    status: 201,
    response: DataResponse(ApplicationResponse),
    handler: async ({ body, site, actor, transaction }) => {
      const { application, apiKey } = await transaction((em) => createApplication(em, actor, siteOf(site), body));
      return { data: toApplicationResponse(application, apiKey) };
    },
  }),
  defineOperation({
    id: 'application.get',
    method: 'GET',
    path: '/application',
    summary: 'Get an API key (masked)',
    tag: 'Administration',
    access: 'application.manage',
    host: 'site',
    query: IdQuery,
    response: DataResponse(ApplicationResponse),
    handler: async ({ query, transaction }) => ({
      data: toApplicationResponse(await transaction((em) => getApplication(em, query.id))),
    }),
  }),
  defineOperation({
    id: 'application.update',
    method: 'PUT',
    path: '/application',
    summary: 'Update or revoke (is_active: false) an API key',
    tag: 'Administration',
    access: 'application.manage',
    host: 'site',
    body: UpdateApplicationBody,
    response: DataResponse(ApplicationResponse),
    handler: async ({ body, site, actor, services, transaction }) => {
      const application = await transaction((em) => updateApplication(em, actor, siteOf(site), body));
      await services.credentials.invalidate();
      return { data: toApplicationResponse(application) };
    },
  }),
  defineOperation({
    id: 'application.search',
    method: 'GET',
    path: '/application/search',
    summary: "Search this site's API keys",
    tag: 'Administration',
    access: 'application.manage',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(ApplicationResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, '-created_at');
      const [rows, total] = await transaction((em) =>
        searchApplications(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map((a) => toApplicationResponse(a)), total, paging);
    },
  }),
];
