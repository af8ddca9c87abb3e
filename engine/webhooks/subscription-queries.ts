import { raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookDeliverySchema, type WebhookDelivery } from '../../persistence/entities/webhook-delivery.entity.ts';
import { WebhookSubscriptionSchema, type WebhookSubscription } from '../../persistence/entities/webhook-subscription.entity.ts';
import { containsPattern } from '../admin/patch.ts';
import { filtersSelecting } from './event-filter.ts';
import { getWebhookSubscription } from './subscription.service.ts';

type Page = { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> };

/**
 * Searches the site's subscriptions: `q` in the URL, activity, and `event`, which finds the subscriptions that
 * would receive that event (exact filter, its entity's `entity:*`, or `*`).
 * @throws DomainError 400 INVALID_WEBHOOK_EVENT for an unknown event name
 */
export async function searchWebhookSubscriptions(
  em: EntityManager,
  filter: { q?: string; is_active?: boolean; event?: string },
  page: Page,
): Promise<[WebhookSubscription[], number]> {
  const selecting = filter.event === undefined ? null : filtersSelecting(filter.event);
  return em.findAndCount(
    WebhookSubscriptionSchema,
    {
      ...(filter.q ? { url: { $ilike: containsPattern(filter.q) } } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
      // jsonb_exists_any is the function behind `?|`, spelled out because `?` is the query builder's placeholder.
      ...(selecting ? { [raw(`jsonb_exists_any(events, array[${selecting.map(() => '?').join(', ')}]::text[])`, selecting)]: true } : {}),
    },
    page,
  );
}

/**
 * One subscription's delivery attempts, newest first.
 * @throws DomainError 404 when the subscription is absent or another site's
 */
export async function listWebhookDeliveries(
  em: EntityManager,
  subscriptionId: string,
  page: Page,
): Promise<[WebhookDelivery[], number]> {
  await getWebhookSubscription(em, subscriptionId);
  // Delivery ids are ULIDs (time-ordered), so id (the paging's tie-breaker) orders attempts written in the same millisecond.
  return em.findAndCount(WebhookDeliverySchema, { subscriptionId }, page);
}
