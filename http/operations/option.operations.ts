import { Type } from 'typebox';
import { createOption, getOption, searchOptions, updateOption } from '../../engine/catalog/option.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { CreateOptionBody, OptionResponse, toOptionResponse, UpdateOptionBody } from '../schemas/option.schema.ts';
import { requireSite } from '../tenancy.ts';

const SORTABLE = { name: 'name', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches the name' })),
    is_active: Type.Optional(Type.Boolean()),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const optionOperations = [
  defineOperation({
    id: 'option.create',
    method: 'POST',
    path: '/option',
    summary: 'Add an option (a job extra such as "fragile") to the catalog',
    tag: 'Catalog',
    access: 'catalog.manage',
    host: 'site',
    body: CreateOptionBody,
    status: 201,
    response: DataResponse(OptionResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toOptionResponse(await transaction((em) => createOption(em, actor, requireSite(site), body))),
    }),
  }),
  defineOperation({
    id: 'option.get',
    method: 'GET',
    path: '/option',
    summary: 'Get an option',
    tag: 'Catalog',
    access: 'catalog.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(OptionResponse),
    handler: async ({ query, transaction }) => ({
      data: toOptionResponse(await transaction((em) => getOption(em, query.id))),
    }),
  }),
  defineOperation({
    id: 'option.update',
    method: 'PUT',
    path: '/option',
    summary: 'Update an option: supplied fields change, null clears',
    tag: 'Catalog',
    access: 'catalog.manage',
    host: 'site',
    body: UpdateOptionBody,
    response: DataResponse(OptionResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toOptionResponse(await transaction((em) => updateOption(em, actor, requireSite(site), body))),
    }),
  }),
  defineOperation({
    id: 'option.search',
    method: 'GET',
    path: '/option/search',
    summary: "Search this site's options",
    tag: 'Catalog',
    access: 'catalog.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(OptionResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'name');
      const [rows, total] = await transaction((em) =>
        searchOptions(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toOptionResponse), total, paging);
    },
  }),
];
