import { Type } from 'typebox';
import { createVehicle, getVehicle, searchVehicles, updateVehicle } from '../../engine/fleet/vehicle.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { CreateVehicleBody, toVehicleResponse, UpdateVehicleBody, VehicleResponse, VehicleType } from '../schemas/vehicle.schema.ts';
import { requireSite } from '../tenancy.ts';

const SORTABLE = { name: 'name', type: 'type', plate_number: 'plateNumber', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches name and plate number' })),
    type: Type.Optional(VehicleType),
    is_active: Type.Optional(Type.Boolean()),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const vehicleOperations = [
  defineOperation({
    id: 'vehicle.create',
    method: 'POST',
    path: '/vehicle',
    summary: 'Add a vehicle to the fleet',
    tag: 'Fleet',
    access: 'fleet.manage',
    host: 'site',
    body: CreateVehicleBody,
    status: 201,
    response: DataResponse(VehicleResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toVehicleResponse(await transaction((em) => createVehicle(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'vehicle.get',
    method: 'GET',
    path: '/vehicle',
    summary: 'Get a vehicle',
    tag: 'Fleet',
    access: 'fleet.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(VehicleResponse),
    handler: async ({ query, transaction }) => ({
      data: toVehicleResponse(await transaction((em) => getVehicle(em, query.id))),
    }),
  }),
  defineOperation({
    id: 'vehicle.update',
    method: 'PUT',
    path: '/vehicle',
    summary: 'Update a vehicle: supplied fields change, null clears',
    tag: 'Fleet',
    access: 'fleet.manage',
    host: 'site',
    body: UpdateVehicleBody,
    response: DataResponse(VehicleResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toVehicleResponse(await transaction((em) => updateVehicle(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'vehicle.search',
    method: 'GET',
    path: '/vehicle/search',
    summary: "Search this site's vehicles",
    tag: 'Fleet',
    access: 'fleet.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(VehicleResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'name');
      const [rows, total] = await transaction((em) =>
        searchVehicles(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toVehicleResponse), total, paging);
    },
  }),
];
