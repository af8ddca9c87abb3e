import { Type } from 'typebox';
import { createZone, getZone, searchZones, updateZone } from '../../engine/fleet/zone.service.ts';
import { ApiError } from '../errors.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { CreateZoneBody, toZoneResponse, UpdateZoneBody, ZoneKind, ZoneResponse } from '../schemas/zone.schema.ts';
import { requireSite } from '../tenancy.ts';

const SORTABLE = { name: 'name', kind: 'kind', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches name and description' })),
    kind: Type.Optional(ZoneKind),
    is_active: Type.Optional(Type.Boolean()),
    contains_lat: Type.Optional(Type.Number({ minimum: -90, maximum: 90, description: 'with contains_lng: zones containing this point' })),
    contains_lng: Type.Optional(Type.Number({ minimum: -180, maximum: 180, description: 'with contains_lat' })),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const zoneOperations = [
  defineOperation({
    id: 'zone.create',
    method: 'POST',
    path: '/zone',
    summary: 'Add a service or banned zone (GeoJSON Polygon or MultiPolygon, [lng, lat])',
    tag: 'Fleet',
    access: 'fleet.manage',
    host: 'site',
    body: CreateZoneBody,
    status: 201,
    response: DataResponse(ZoneResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toZoneResponse(await transaction((em) => createZone(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'zone.get',
    method: 'GET',
    path: '/zone',
    summary: 'Get a zone',
    tag: 'Fleet',
    access: 'fleet.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(ZoneResponse),
    handler: async ({ query, transaction }) => ({
      data: toZoneResponse(await transaction((em) => getZone(em, query.id))),
    }),
  }),
  defineOperation({
    id: 'zone.update',
    method: 'PUT',
    path: '/zone',
    summary: 'Update a zone: supplied fields change, null clears',
    tag: 'Fleet',
    access: 'fleet.manage',
    host: 'site',
    body: UpdateZoneBody,
    response: DataResponse(ZoneResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toZoneResponse(await transaction((em) => updateZone(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'zone.search',
    method: 'GET',
    path: '/zone/search',
    summary: "Search this site's zones, optionally those containing a point",
    tag: 'Fleet',
    access: 'fleet.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(ZoneResponse),
    handler: async ({ query, transaction }) => {
      if ((query.contains_lat === undefined) !== (query.contains_lng === undefined)) {
        const missing = query.contains_lat === undefined ? 'contains_lat' : 'contains_lng';
        throw ApiError.validation([{ field: missing, message: 'contains_lat and contains_lng go together' }]);
      }
      const paging = readPaging(query, SORTABLE, 'name');
      const [rows, total] = await transaction((em) => searchZones(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }));
      return searchBody(rows.map(toZoneResponse), total, paging);
    },
  }),
];
