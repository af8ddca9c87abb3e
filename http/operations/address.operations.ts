import { Type } from 'typebox';
import { checkAddressChange, checkGlobalAddressChange } from '../../engine/admin/address-change-rules.ts';
import { createAddress, getAddress, searchAddresses, updateAddress } from '../../engine/admin/address.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { AddressRequest, AddressResponse, toAddressResponse, UpdateAddressBody } from '../schemas/address.schema.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { locateRequestAddresses } from '../site-mapping.ts';
import { addressHiddenFrom } from '../../engine/admin/address-visibility.ts';
import { DomainError } from '../../engine/domain-error.ts';

const SORTABLE = { formatted_name: 'formattedName', city: 'city', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches the formatted address' })),
    city: Type.Optional(Type.String({ maxLength: 200 })),
    postal_code: Type.Optional(Type.String({ maxLength: 20 })),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const addressOperations = [
  defineOperation({
    id: 'address.create',
    method: 'POST',
    path: '/address',
    summary: 'Store an address (on the platform host: a global address)',
    tag: 'Addresses',
    access: 'address.write',
    host: 'any',
    body: AddressRequest,
    status: 201,
    response: DataResponse(AddressResponse),
    handler: async (ctx) => {
      await locateRequestAddresses(ctx, [{ address: ctx.body, field: 'point' }]);
      return { data: toAddressResponse(await ctx.transaction((em) => createAddress(em, ctx.actor, ctx.site?.id ?? null, ctx.body))) };
    },
  }),
  defineOperation({
    id: 'address.get',
    method: 'GET',
    path: '/address',
    summary: "Get an address of this site, or a global one",
    tag: 'Addresses',
    access: 'address.read',
    host: 'any',
    query: IdQuery,
    response: DataResponse(AddressResponse),
    handler: async ({ query, principal, actor, transaction }) => ({
      data: toAddressResponse(
        await transaction(async (em) => {
          // Another person's place is absent to a customer or driver, as if it did not exist.
          if (principal && (await addressHiddenFrom(em, { userId: actor.userId, role: principal.role }, query.id))) throw DomainError.notFound('Address', query.id);
          return getAddress(em, query.id);
        }),
      ),
    }),
  }),
  defineOperation({
    id: 'address.update',
    method: 'PUT',
    path: '/address',
    summary: 'Update an address: supplied fields change, null clears',
    tag: 'Addresses',
    access: 'address.write',
    host: 'any',
    body: UpdateAddressBody,
    response: DataResponse(AddressResponse),
    handler: async ({ body, site, actor, principal, transaction }) => {
      const { override_zone_restriction: override, ...patch } = body;
      const siteId = site?.id ?? null;
      const address = await transaction(async (em) => {
        // A platform operator on a site's host follows the site's staff rules (the override, audited).
        if (siteId && principal) await checkAddressChange(em, siteId, { ...actor, role: principal.role === 'platform' ? 'admin' : principal.role }, patch, override === true);
        // On the platform host only global addresses change, and sites' open stops may stand on them.
        else if (principal?.role === 'platform') await checkGlobalAddressChange(em, actor, patch, override === true);
        return updateAddress(em, actor, siteId, patch);
      });
      return { data: toAddressResponse(address) };
    },
  }),
  defineOperation({
    id: 'address.search',
    method: 'GET',
    path: '/address/search',
    summary: "Search this site's addresses",
    tag: 'Addresses',
    access: 'address.search',
    host: 'any',
    query: SearchQuery,
    response: SearchResponse(AddressResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, '-created_at');
      const [rows, total] = await transaction((em) =>
        searchAddresses(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toAddressResponse), total, paging);
    },
  }),
];
