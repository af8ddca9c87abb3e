import { Type } from 'typebox';
import { searchWorkers } from '../../engine/fleet/worker-search.ts';
import { createWorker, getWorker, updateWorker } from '../../engine/fleet/worker.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, Id, IdQuery } from '../schemas/common.schema.ts';
import { CreateWorkerBody, OperationalStatusSchema, toWorkerResponse, UpdateWorkerBody, WorkerResponse } from '../schemas/worker.schema.ts';
import { CustomFieldFilterQuery } from '../schemas/customfield.schema.ts';
import { requireSite } from '../tenancy.ts';

// A worker's id is its user id (the search orders `id` by `user_id`).
const SORTABLE = { created_at: 'createdAt', operational_status: 'operationalStatus', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches names, email and phone' })),
    team_id: Type.Optional(Id),
    zone_id: Type.Optional(Id),
    skill: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    operational_status: Type.Optional(OperationalStatusSchema),
    has_vehicle: Type.Optional(Type.Boolean({ description: 'whether a default vehicle is set' })),
    custom_fields: Type.Optional(CustomFieldFilterQuery),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const workerOperations = [
  defineOperation({
    id: 'worker.create',
    method: 'POST',
    path: '/worker',
    summary: 'Make a driver a worker: an existing driver (user_id) or a new user created with a driver profile',
    tag: 'Fleet',
    access: 'worker.manage',
    host: 'site',
    body: CreateWorkerBody,
    status: 201,
    response: DataResponse(WorkerResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toWorkerResponse(await transaction((em) => createWorker(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'worker.get',
    method: 'GET',
    path: '/worker',
    summary: 'Get a worker by user id',
    tag: 'Fleet',
    access: 'worker.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(WorkerResponse),
    handler: async ({ query, transaction }) => ({
      data: toWorkerResponse(await transaction((em) => getWorker(em, query.id))),
    }),
  }),
  defineOperation({
    id: 'worker.update',
    method: 'PUT',
    path: '/worker',
    summary: "Update a worker's dispatch details: supplied fields change, null clears",
    tag: 'Fleet',
    access: 'worker.manage',
    host: 'site',
    body: UpdateWorkerBody,
    response: DataResponse(WorkerResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toWorkerResponse(await transaction((em) => updateWorker(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'worker.search',
    method: 'GET',
    path: '/worker/search',
    summary: "Search this site's workers",
    tag: 'Fleet',
    access: 'worker.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(WorkerResponse),
    handler: async ({ query, site, read }) => {
      const paging = readPaging(query, SORTABLE, 'created_at');
      const [rows, total] = await searchWorkers(read, requireSite(site).id, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy });
      return searchBody(rows.map(toWorkerResponse), total, paging);
    },
  }),
];
