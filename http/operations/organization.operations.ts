import { Type } from 'typebox';
import {
  createOrganization,
  getOrganization,
  searchOrganizations,
  updateOrganization,
} from '../../engine/admin/organization.service.ts';
import { ApiError } from '../errors.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import {
  CreateOrganizationBody,
  OrganizationResponse,
  toOrganizationResponse,
  UpdateOrganizationBody,
} from '../schemas/organization.schema.ts';

const SORTABLE = { name: 'name', created_at: 'createdAt', updated_at: 'updatedAt', id: 'id' };

const SearchQuery = Type.Object(
  { q: Type.Optional(Type.String({ maxLength: 200 })), is_active: Type.Optional(Type.Boolean()), ...pagingQuery(SORTABLE) },
  { additionalProperties: false },
);

export const organizationOperations = [
  defineOperation({
    id: 'organization.create',
    method: 'POST',
    path: '/organization',
    summary: 'Create an organization',
    tag: 'Administration',
    access: 'organization.manage',
    host: 'platform',
    body: CreateOrganizationBody,
    status: 201,
    response: DataResponse(OrganizationResponse),
    handler: async ({ body, actor, transaction }) => ({
      data: toOrganizationResponse(await transaction((em) => createOrganization(em, actor, body))),
    }),
  }),
  defineOperation({
    id: 'organization.get',
    method: 'GET',
    path: '/organization',
    summary: 'Get an organization (a site admin sees their own)',
    tag: 'Administration',
    access: 'organization.read',
    host: 'any',
    query: IdQuery,
    response: DataResponse(OrganizationResponse),
    handler: async ({ query, site, transaction }) => {
      if (site && site.organizationId !== query.id) throw ApiError.notFound('Organization', query.id);
      return { data: toOrganizationResponse(await transaction((em) => getOrganization(em, query.id))) };
    },
  }),
  defineOperation({
    id: 'organization.update',
    method: 'PUT',
    path: '/organization',
    summary: 'Update an organization: supplied fields change, null clears; is_active false switches off all its sites',
    tag: 'Administration',
    access: 'organization.manage',
    host: 'platform',
    body: UpdateOrganizationBody,
    response: DataResponse(OrganizationResponse),
    handler: async ({ body, actor, services, transaction }) => {
      const updated = await transaction((em) => updateOrganization(em, actor, body));
      // Its sites serve only while it is on: switched either way, every process rereads them at the next request.
      if (body.is_active !== undefined) {
        services.sites.invalidate();
        await services.credentials.invalidate();
      }
      return { data: toOrganizationResponse(updated) };
    },
  }),
  defineOperation({
    id: 'organization.search',
    method: 'GET',
    path: '/organization/search',
    summary: 'Search organizations by name or email',
    tag: 'Administration',
    access: 'organization.manage',
    host: 'platform',
    query: SearchQuery,
    response: SearchResponse(OrganizationResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'name');
      const [rows, total] = await transaction((em) =>
        searchOrganizations(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toOrganizationResponse), total, paging);
    },
  }),
];
