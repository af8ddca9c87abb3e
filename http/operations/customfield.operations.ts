import { Type } from 'typebox';
import { createDefinition, getDefinition, searchDefinitions, updateDefinition } from '../../engine/customfields/custom-field.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import {
  CreateCustomFieldBody,
  CustomFieldDataType,
  CustomFieldEntityType,
  CustomFieldResponse,
  toCustomFieldResponse,
  UpdateCustomFieldBody,
} from '../schemas/customfield.schema.ts';
import { requireSite } from '../tenancy.ts';

const SORTABLE = { sort_order: 'sortOrder', key: 'key', label: 'label', entity_type: 'entityType', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    entity_type: Type.Optional(CustomFieldEntityType),
    data_type: Type.Optional(CustomFieldDataType),
    is_active: Type.Optional(Type.Boolean()),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches key and label' })),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

const TAG = 'Custom fields';

export const customFieldOperations = [
  defineOperation({
    id: 'customfield.create',
    method: 'POST',
    path: '/customfield',
    summary: 'Define a custom field of jobs, stops, workers or customers',
    tag: TAG,
    access: 'customfield.manage',
    host: 'site',
    body: CreateCustomFieldBody,
    status: 201,
    response: DataResponse(CustomFieldResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toCustomFieldResponse(await transaction((em) => createDefinition(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'customfield.get',
    method: 'GET',
    path: '/customfield',
    summary: 'Get a custom field definition',
    tag: TAG,
    access: 'customfield.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(CustomFieldResponse),
    handler: async ({ query, transaction }) => ({ data: toCustomFieldResponse(await transaction((em) => getDefinition(em, query.id))) }),
  }),
  defineOperation({
    id: 'customfield.update',
    method: 'PUT',
    path: '/customfield',
    summary: 'Update a custom field definition (label, required, options, sort order, active)',
    tag: TAG,
    access: 'customfield.manage',
    host: 'site',
    body: UpdateCustomFieldBody,
    response: DataResponse(CustomFieldResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toCustomFieldResponse(await transaction((em) => updateDefinition(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'customfield.search',
    method: 'GET',
    path: '/customfield/search',
    summary: "Search the site's custom field definitions (default order: sort_order)",
    tag: TAG,
    access: 'customfield.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(CustomFieldResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'sort_order');
      const [rows, total] = await transaction((em) => searchDefinitions(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }));
      return searchBody(rows.map(toCustomFieldResponse), total, paging);
    },
  }),
];
