import { Type } from 'typebox';
import {
  createServiceType,
  getServiceType,
  searchServiceTypes,
  updateServiceType,
} from '../../engine/catalog/service-type.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import {
  CreateServiceTypeBody,
  ServiceTypeResponse,
  toServiceTypeResponse,
  UpdateServiceTypeBody,
} from '../schemas/service-type.schema.ts';
import { requireSite } from '../tenancy.ts';

const SORTABLE = { name: 'name', code: 'code', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches name and code' })),
    is_active: Type.Optional(Type.Boolean()),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const serviceTypeOperations = [
  defineOperation({
    id: 'servicetype.create',
    method: 'POST',
    path: '/servicetype',
    summary: 'Add a service type to the catalog',
    tag: 'Catalog',
    access: 'catalog.manage',
    host: 'site',
    body: CreateServiceTypeBody,
    status: 201,
    response: DataResponse(ServiceTypeResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toServiceTypeResponse(await transaction((em) => createServiceType(em, actor, requireSite(site), body))),
    }),
  }),
  defineOperation({
    id: 'servicetype.get',
    method: 'GET',
    path: '/servicetype',
    summary: 'Get a service type',
    tag: 'Catalog',
    access: 'catalog.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(ServiceTypeResponse),
    handler: async ({ query, transaction }) => ({
      data: toServiceTypeResponse(await transaction((em) => getServiceType(em, query.id))),
    }),
  }),
  defineOperation({
    id: 'servicetype.update',
    method: 'PUT',
    path: '/servicetype',
    summary: 'Update a service type: supplied fields change, null clears',
    tag: 'Catalog',
    access: 'catalog.manage',
    host: 'site',
    body: UpdateServiceTypeBody,
    response: DataResponse(ServiceTypeResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toServiceTypeResponse(await transaction((em) => updateServiceType(em, actor, requireSite(site), body))),
    }),
  }),
  defineOperation({
    id: 'servicetype.search',
    method: 'GET',
    path: '/servicetype/search',
    summary: "Search this site's service types",
    tag: 'Catalog',
    access: 'catalog.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(ServiceTypeResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'name');
      const [rows, total] = await transaction((em) =>
        searchServiceTypes(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toServiceTypeResponse), total, paging);
    },
  }),
];
