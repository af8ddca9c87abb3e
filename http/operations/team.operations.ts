import { Type } from 'typebox';
import { createTeam, getTeam, searchTeams, updateTeam } from '../../engine/fleet/team.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { CreateTeamBody, TeamResponse, toTeamResponse, UpdateTeamBody } from '../schemas/team.schema.ts';
import { requireSite } from '../tenancy.ts';

const SORTABLE = { name: 'name', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches name and description' })),
    is_active: Type.Optional(Type.Boolean()),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const teamOperations = [
  defineOperation({
    id: 'team.create',
    method: 'POST',
    path: '/team',
    summary: 'Add a team',
    tag: 'Fleet',
    access: 'fleet.manage',
    host: 'site',
    body: CreateTeamBody,
    status: 201,
    response: DataResponse(TeamResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toTeamResponse(await transaction((em) => createTeam(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'team.get',
    method: 'GET',
    path: '/team',
    summary: 'Get a team',
    tag: 'Fleet',
    access: 'fleet.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(TeamResponse),
    handler: async ({ query, transaction }) => ({
      data: toTeamResponse(await transaction((em) => getTeam(em, query.id))),
    }),
  }),
  defineOperation({
    id: 'team.update',
    method: 'PUT',
    path: '/team',
    summary: 'Update a team: supplied fields change, null clears',
    tag: 'Fleet',
    access: 'fleet.manage',
    host: 'site',
    body: UpdateTeamBody,
    response: DataResponse(TeamResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toTeamResponse(await transaction((em) => updateTeam(em, actor, requireSite(site).id, body))),
    }),
  }),
  defineOperation({
    id: 'team.search',
    method: 'GET',
    path: '/team/search',
    summary: "Search this site's teams",
    tag: 'Fleet',
    access: 'fleet.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(TeamResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'name');
      const [rows, total] = await transaction((em) =>
        searchTeams(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toTeamResponse), total, paging);
    },
  }),
];
