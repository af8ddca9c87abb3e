import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import { webhookAuditView } from './subscription.service.ts';
import { WebhookSubscriptionSchema } from '../../persistence/entities/webhook-subscription.entity.ts';

/** Why delivery switched a subscription off (the `deactivation_reason` column; `manual` is the API's). */
export type DeactivationReason = 'http_404' | 'http_410' | 'unresolvable_host' | 'retries_exhausted';

/**
 * Switches a subscription off for `reason`, in the caller's transaction (bound to the subscription's site), and
 * audits it as the system (`action: 'deactivate'`, entity type `Webhook`, no user). The row is locked first, so of
 * several deliveries failing at once only one deactivates and audits; an already inactive (or deleted) subscription
 * is left alone.
 *
 * @returns whether this call deactivated it
 */
export async function deactivateSubscription(
  em: EntityManager,
  input: { siteId: string; subscriptionId: string; reason: DeactivationReason; now: Date; requestId: string },
): Promise<boolean> {
  const subscription = await em.findOne(WebhookSubscriptionSchema, { id: input.subscriptionId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!subscription || !subscription.isActive) return false;
  const before = webhookAuditView(subscription);
  subscription.isActive = false;
  subscription.deactivatedAt = input.now;
  subscription.deactivationReason = input.reason;
  recordAudit(
    em,
    { userId: null, applicationId: null, requestId: input.requestId },
    { siteId: input.siteId, action: 'deactivate', entityType: 'Webhook', entityId: subscription.id, before, after: webhookAuditView(subscription) },
  );
  await em.flush();
  return true;
}

