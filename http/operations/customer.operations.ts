import { Type } from 'typebox';
import { checkNewCustomer, createCustomer, getCustomer, updateCustomer } from '../../engine/catalog/customer-admin.ts';
import { customerMetrics } from '../../engine/catalog/customer-metrics.ts';
import { searchCustomers } from '../../engine/catalog/customer.service.ts';
import { parseCustomFieldFilter } from '../../engine/customfields/custom-field-values.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, IdQuery, Timestamp } from '../schemas/common.schema.ts';
import { CreateCustomerBody, CustomerMetricsResponse, CustomerResponse, toCustomerResponse, UpdateCustomerBody } from '../schemas/customer.schema.ts';
import { CustomFieldFilterQuery } from '../schemas/customfield.schema.ts';
import { requireSite } from '../tenancy.ts';
import { homeAddressToLocate, locateRequestAddresses } from '../site-mapping.ts';

const SORTABLE = { email: 'email', first_name: 'firstName', last_name: 'lastName', created_at: 'createdAt', id: 'id' };
const DAY_MS = 86_400_000;

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches email, names and phone' })),
    is_active: Type.Optional(Type.Boolean({ description: 'default true' })),
    custom_fields: Type.Optional(CustomFieldFilterQuery),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

const MetricsQuery = Type.Object(
  {
    from: Type.Optional(Timestamp),
    to: Type.Optional(Timestamp),
  },
  { additionalProperties: false, description: 'a [from, to) range; default the 30 days before now' },
);

const TAG = 'Customers';

export const customerOperations = [
  defineOperation({
    id: 'customer.create',
    method: 'POST',
    path: '/customer',
    summary: 'Add a customer (home_address_id wins over home_address)',
    tag: TAG,
    access: 'customer.manage',
    host: 'site',
    body: CreateCustomerBody,
    status: 201,
    response: DataResponse(CustomerResponse),
    handler: async (ctx) => {
      await locateRequestAddresses(ctx, homeAddressToLocate(ctx.body), (em) => checkNewCustomer(em, requireSite(ctx.site).id, ctx.body));
      return { data: toCustomerResponse(await ctx.transaction((em) => createCustomer(em, ctx.actor, requireSite(ctx.site).id, ctx.body))) };
    },
  }),
  defineOperation({
    id: 'customer.get',
    method: 'GET',
    path: '/customer',
    summary: 'Get a customer',
    tag: TAG,
    access: 'customer.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(CustomerResponse),
    handler: async ({ query, transaction }) => ({ data: toCustomerResponse(await transaction((em) => getCustomer(em, query.id))) }),
  }),
  defineOperation({
    id: 'customer.update',
    method: 'PUT',
    path: '/customer',
    summary: 'Update a customer: only supplied fields change; home_address_id "" clears the home address',
    tag: TAG,
    access: 'customer.manage',
    host: 'site',
    body: UpdateCustomerBody,
    response: DataResponse(CustomerResponse),
    handler: async (ctx) => {
      const { body, site, actor, services, transaction } = ctx;
      await locateRequestAddresses(ctx, homeAddressToLocate(ctx.body));
      const view = await transaction((em) => updateCustomer(em, actor, requireSite(site).id, body));
      // A deactivated customer, or one whose password changed, is refused at their next request, not after the
      // cached credential's 30 s (as PUT /user does).
      if (body.is_active !== undefined || body.password !== undefined) await services.credentials.invalidate();
      return { data: toCustomerResponse(view) };
    },
  }),
  defineOperation({
    id: 'customer.search',
    method: 'GET',
    path: '/customer/search',
    summary: "Search this site's customers (id is the customer_user_id a job takes); custom_fields filters by value",
    tag: TAG,
    access: 'customer.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(CustomerResponse),
    handler: async ({ query, site, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'email');
      const filter = { q: query.q, is_active: query.is_active, custom_fields: parseCustomFieldFilter(query.custom_fields) };
      const [rows, total] = await transaction((em) =>
        searchCustomers(em, requireSite(site).id, filter, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toCustomerResponse), total, paging);
    },
  }),
  defineOperation({
    id: 'customer.metrics',
    method: 'GET',
    path: '/customer/metrics',
    summary: 'Customer figures over a time range: active, new, total, cancellation rate',
    tag: TAG,
    access: 'customer.read',
    host: 'site',
    query: MetricsQuery,
    response: DataResponse(CustomerMetricsResponse),
    handler: async ({ query, site, services, transaction }) => {
      const to = query.to ? new Date(query.to) : services.clock.now();
      const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS);
      const metrics = await transaction((em) => customerMetrics(em, requireSite(site).id, from, to));
      return { data: { from: from.toISOString(), to: to.toISOString(), ...metrics } };
    },
  }),
];
