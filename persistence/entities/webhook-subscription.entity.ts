import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/**
 * A site's webhook subscription. The signing secret is stored encrypted (FieldCrypto, bound to this row's
 * `secret_ciphertext`) and never returned; null means unsigned deliveries.
 */
export const WebhookSubscriptionSchema = defineEntity({
  name: 'WebhookSubscription',
  tableName: 'webhook_subscription',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    url: p.text(),
    /** Exact event names (`job:create`) or `entity:*`. */
    events: p.json<string[]>(),
    secretCiphertext: p.text().nullable(),
    isActive: p.boolean().default(true),
    deactivatedAt: p.datetime().nullable(),
    /** Why it was switched off: `http_404`, `http_410`, `unresolvable_host`, `retries_exhausted`, `manual`. */
    deactivationReason: p.string().nullable(),
    description: p.string().nullable(),
    createdByUserId: p.string().nullable(),
    ...timestamps(),
  },
});

export type WebhookSubscription = InferEntity<typeof WebhookSubscriptionSchema>;
