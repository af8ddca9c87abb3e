import { Type } from 'typebox';
import type { Services } from '../../app/services.ts';
import {
  createWebhookSubscription,
  deleteWebhookSubscription,
  getWebhookSubscription,
  updateWebhookSubscription,
  type SubscriptionContext,
} from '../../engine/webhooks/subscription.service.ts';
import { listWebhookDeliveries, searchWebhookSubscriptions } from '../../engine/webhooks/subscription-queries.ts';
import { assertPublicWebhookUrl } from '../../engine/webhooks/url-safety.ts';
import type { AuditActor } from '../../persistence/audit.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse, Deleted, Id, IdQuery } from '../schemas/common.schema.ts';
import {
  CreateWebhookBody,
  toWebhookDeliveryResponse,
  toWebhookResponse,
  UpdateWebhookBody,
  WebhookDeliveryResponse,
  WebhookResponse,
} from '../schemas/webhook.schema.ts';
import { requireSite } from '../tenancy.ts';

const SORTABLE = { url: 'url', created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'matches the URL' })),
    is_active: Type.Optional(Type.Boolean()),
    event: Type.Optional(Type.String({ maxLength: 64, description: 'an event name: subscriptions that would receive it' })),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

// Attempts come newest first unless sorted by created_at ascending (ties broken by id: ULIDs, in time order).
const DELIVERY_SORTABLE = { created_at: 'createdAt' };
const DeliveriesQuery = Type.Object({ id: Id, ...pagingQuery(DELIVERY_SORTABLE) }, { additionalProperties: false });

export const webhookOperations = [
  defineOperation({
    id: 'webhook.create',
    method: 'POST',
    path: '/webhook',
    summary: 'Subscribe an HTTPS endpoint to events',
    description: 'The URL must be https and its host public: loopback, private, link-local and other non-public addresses, and names resolving to them, are refused with INVALID_WEBHOOK_URL.',
    tag: 'Webhooks',
    access: 'webhook.manage',
    host: 'site',
    body: CreateWebhookBody,
    status: 201,
    response: DataResponse(WebhookResponse),
    handler: async ({ body, site, actor, services, transaction }) => ({
      data: toWebhookResponse(await transaction((em) => createWebhookSubscription(em, subscriptionContext(services, actor, site), body))),
    }),
  }),
  defineOperation({
    id: 'webhook.get',
    method: 'GET',
    path: '/webhook',
    summary: 'Get a webhook subscription, including its active status',
    tag: 'Webhooks',
    access: 'webhook.manage',
    host: 'site',
    query: IdQuery,
    response: DataResponse(WebhookResponse),
    handler: async ({ query, transaction }) => ({
      data: toWebhookResponse(await transaction((em) => getWebhookSubscription(em, query.id))),
    }),
  }),
  defineOperation({
    id: 'webhook.update',
    method: 'PUT',
    path: '/webhook',
    summary: 'Update a webhook subscription: omitted fields stay; secret_key "" or null removes the secret; is_active true reactivates',
    tag: 'Webhooks',
    access: 'webhook.manage',
    host: 'site',
    query: IdQuery,
    body: UpdateWebhookBody,
    response: DataResponse(WebhookResponse),
    handler: async ({ query, body, site, actor, services, transaction }) => ({
      data: toWebhookResponse(
        await transaction((em) => updateWebhookSubscription(em, subscriptionContext(services, actor, site), query.id, body)),
      ),
    }),
  }),
  defineOperation({
    id: 'webhook.delete',
    method: 'DELETE',
    path: '/webhook',
    summary: 'Delete a webhook subscription and its delivery log',
    tag: 'Webhooks',
    access: 'webhook.manage',
    host: 'site',
    query: IdQuery,
    response: Deleted,
    handler: async ({ query, site, actor, transaction }) => {
      await transaction((em) => deleteWebhookSubscription(em, actor, requireSite(site).id, query.id));
      return { data: { id: query.id, deleted: true as const } };
    },
  }),
  defineOperation({
    id: 'webhook.search',
    method: 'GET',
    path: '/webhook/search',
    summary: "Search this site's webhook subscriptions",
    tag: 'Webhooks',
    access: 'webhook.manage',
    host: 'site',
    query: SearchQuery,
    response: SearchResponse(WebhookResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, 'created_at');
      const [rows, total] = await transaction((em) =>
        searchWebhookSubscriptions(em, query, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toWebhookResponse), total, paging);
    },
  }),
  defineOperation({
    id: 'webhook.deliveries',
    method: 'GET',
    path: '/webhook/deliveries',
    summary: "A subscription's delivery attempts, newest first",
    tag: 'Webhooks',
    access: 'webhook.manage',
    host: 'site',
    query: DeliveriesQuery,
    response: SearchResponse(WebhookDeliveryResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, DELIVERY_SORTABLE, '-created_at');
      const [rows, total] = await transaction((em) => listWebhookDeliveries(em, query.id, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }));
      return searchBody(rows.map(toWebhookDeliveryResponse), total, paging);
    },
  }),
];

/** The engine's view of the request: who acts, where, the clock's now, and the URL check under this deployment's rules. */
function subscriptionContext(services: Services, actor: AuditActor, site: { id: string } | null): SubscriptionContext {
  const allowLoopback = services.config.webhookAllowLoopback;
  return {
    actor,
    siteId: requireSite(site).id,
    crypto: services.crypto,
    now: services.clock.now(),
    assertUrl: (url) => assertPublicWebhookUrl(url, { allowLoopback }),
  };
}
