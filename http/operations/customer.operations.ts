import { Type } from 'typebox';
import { searchCustomers } from '../../engine/catalog/customer.service.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { CustomerSummaryResponse, toCustomerSummaryResponse } from '../schemas/customer.schema.ts';
import { requireSite } from '../tenancy.ts';

const SORTABLE = { email: 'email', first_name: 'firstName', last_name: 'lastName', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches email, names and phone' })),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

export const customerOperations = [
  defineOperation({
    id: 'customer.search',
    method: 'GET',
    path: '/customer/search',
    summary: "Search this site's active customers (id is the customer_user_id a job takes)",
    tag: 'Customers',
    access: 'customer.read',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(CustomerSummaryResponse),
    handler: async ({ query, site, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'email');
      const [rows, total] = await transaction((em) =>
        searchCustomers(em, requireSite(site).id, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toCustomerSummaryResponse), total, paging);
    },
  }),
];
