import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter } from './columns.ts';

/** One delivery attempt of one event to one subscription: what `GET /webhook/deliveries` shows. */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    subscriptionId: p.string(),
    /** The event's id (its outbox row id): the `webhook-id` header, stable across retries. */
    eventId: p.string(),
    event: p.string(),
    attempt: p.integer(),
    /** `succeeded`, `failed` (will retry), `abandoned` (no more retries). */
    status: p.string(),
    responseStatus: p.integer().nullable(),
    durationMs: p.integer(),
    error: p.text().nullable(),
    /** On a failed attempt, when its retry is due (cleared once the retry is recorded): the queue sweeper's record of it. */
    retryDueAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type WebhookDelivery = InferEntity<typeof WebhookDeliverySchema>;
