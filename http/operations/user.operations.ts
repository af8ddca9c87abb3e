import { Type } from 'typebox';
import { createUser, getUser, searchUsers, updateUser } from '../../engine/admin/user.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { CreateUserBody, SiteRoleSchema, toUserResponse, UpdateUserBody, UserResponse } from '../schemas/user.schema.ts';
import { homeAddressToLocate, locateRequestAddresses } from '../site-mapping.ts';

const SORTABLE = { email: 'email', first_name: 'firstName', last_name: 'lastName', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches email and names' })),
    role: Type.Optional(SiteRoleSchema),
    is_active: Type.Optional(Type.Boolean({ description: 'profile state on this site' })),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const userOperations = [
  defineOperation({
    id: 'user.create',
    method: 'POST',
    path: '/user',
    summary: 'Create a user; with a role, also their profile on the site',
    description: 'On a site host the role is required and the profile is on that site; the platform operator names site_id.',
    tag: 'Administration',
    access: 'user.manage',
    host: 'any',
    body: CreateUserBody,
    status: 201,
    response: DataResponse(UserResponse),
    handler: async ({ body, site, actor, transaction }) => ({
      data: toUserResponse(await transaction((em) => createUser(em, actor, { siteId: site?.id ?? null }, body))),
    }),
  }),
  defineOperation({
    id: 'user.get',
    method: 'GET',
    path: '/user',
    summary: 'Get a user (on a site host: a user with a profile on that site)',
    tag: 'Administration',
    access: 'user.read',
    host: 'any',
    query: IdQuery,
    response: DataResponse(UserResponse),
    handler: async ({ query, site, transaction }) => ({
      data: toUserResponse(await transaction((em) => getUser(em, { siteId: site?.id ?? null }, query.id))),
    }),
  }),
  defineOperation({
    id: 'user.update',
    method: 'PUT',
    path: '/user',
    summary: 'Update a user: supplied fields change, null clears; home_address_id wins over home_address',
    tag: 'Administration',
    access: 'user.manage',
    host: 'any',
    body: UpdateUserBody,
    response: DataResponse(UserResponse),
    handler: async (ctx) => {
      const { body, site, actor, services, transaction } = ctx;
      await locateRequestAddresses(ctx, homeAddressToLocate(ctx.body));
      const view = await transaction((em) => updateUser(em, actor, { siteId: site?.id ?? null }, body));
      await services.credentials.invalidate();
      return { data: toUserResponse(view) };
    },
  }),
  defineOperation({
    id: 'user.search',
    method: 'GET',
    path: '/user/search',
    summary: 'Search users by email or name, role and profile state',
    tag: 'Administration',
    access: 'user.read',
    host: 'any',
    query: SearchQuery,
    response: SearchResponse(UserResponse),
    handler: async ({ query, site, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'email');
      const [rows, total] = await transaction((em) =>
        searchUsers(em, { siteId: site?.id ?? null }, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toUserResponse), total, paging);
    },
  }),
];
