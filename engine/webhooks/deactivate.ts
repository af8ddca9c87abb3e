import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import { webhookAuditView } from './subscription.service.ts';
import { WebhookSubscriptionSchema, type WebhookSubscription } from '../../persistence/entities/webhook-subscription.entity.ts';

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

/**
 * Whether the subscription was switched off at any time after `since` (wall-clock ms), even if it is active again:
 * a delivery queued before a deactivation is dropped, so a reactivation never replays it. Reactivation clears
 * `deactivated_at`, so the audit log is the record: every switch-off (this module's `deactivate`, the API's
 * `update` with is_active false) is audited with `is_active: false` in its new data. The log is read only when the
 * row changed after `since`, which a delivery seldom meets.
 */
export async function switchedOffSince(em: EntityManager, subscription: WebhookSubscription, since: number): Promise<boolean> {
  if (!subscription.isActive) return true;
  if (subscription.updatedAt.getTime() <= since) return false;
  const rows = await em.execute<{ found: number }[]>(
    `select 1 as found from audit_record
     where site_id = ? and entity_type = 'Webhook' and entity_id = ? and created_at > ? and new_data->>'is_active' = 'false'
     limit 1`,
    [subscription.siteId, subscription.id, new Date(since)],
  );
  return rows.length > 0;
}
