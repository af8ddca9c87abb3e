import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { DurableQueue, JobHandler } from '../queue/durable-queue.ts';
import { WebhookDeliverySchema } from '../../persistence/entities/webhook-delivery.entity.ts';
import { WebhookSubscriptionSchema } from '../../persistence/entities/webhook-subscription.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { newId } from '../../persistence/ids.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { deactivateSubscription, switchedOffSince, type DeactivationReason } from './deactivate.ts';
import { enqueueDelivery, readDeliveryJob, type DeliveryJobData } from './delivery-job.ts';
import { nextDelayMs, type RetryPolicy } from './retry-policy.ts';
import { signatureHeaders } from './signing.ts';
import type { PostResult, WebhookClient } from './webhook-client.ts';

export type DeliveryDeps = {
  orm: MikroORM;
  queue: DurableQueue;
  crypto: FieldCrypto;
  client: WebhookClient;
  /** Stamps `deactivated_at` (the engine's clock; signature timestamps and `queued_at` are wall time). */
  clock: Clock;
  logger: Logger;
  retry: RetryPolicy;
  /** Jitter source, in [0, 1). */
  random?: () => number;
};

type Verdict = { status: 'succeeded' | 'failed' | 'abandoned'; deactivate: DeactivationReason | null; retryInMs: number | null };

/**
 * The handler of the `webhooks` queue: one attempt of one event to one subscription.
 *
 * 1. Bound to the event's site: skip if the event already reached a final state for this subscription (a run
 *    repeated after a crash); drop it (recorded `abandoned`) if the subscription is inactive or was deactivated
 *    after the event was queued, so a reactivation never replays it; decrypt the secret.
 * 2. POST the stored body with its signatures (no transaction is held during the request).
 * 3. Record the attempt (`webhook_delivery`) and, in the same transaction, schedule the next attempt or deactivate:
 *    404, 410 and an unknown host (ENOTFOUND: NXDOMAIN or no address; never EAI_AGAIN) deactivate at once; any other
 *    failure is retried on the policy and deactivates once the attempts are used up.
 *
 * Delivery is at least once: a crash between the POST and step 3 sends the event again with the same `webhook-id`.
 */
export function createDeliveryHandler(deps: DeliveryDeps): JobHandler {
  return async (job) => {
    const delivery = readDeliveryJob(job.data);
    // Only a job run before (its process died, or it threw after recording) may find its event already settled.
    const rerun = job.attempt > 1;
    const target = await inTenantScope(deps.orm, { siteId: delivery.site_id }, (em) => prepare(em, deps, delivery, rerun));
    if (!target) return;
    const body = Buffer.from(delivery.body, 'utf8');
    const headers = signatureHeaders(target.secret, delivery.event_id, Math.floor(Date.now() / 1000), body);
    const result = await deps.client.post(target.url, body, { ...headers });
    const verdict = judge(deps, delivery, result);
    const deactivated = await inTenantScope(deps.orm, { siteId: delivery.site_id }, (em) => record(em, deps, delivery, result, verdict));
    if (deactivated) {
      deps.logger.warn({ subscriptionId: delivery.subscription_id, reason: verdict.deactivate }, 'webhook subscription deactivated');
    }
  };
}

async function prepare(
  em: EntityManager,
  deps: DeliveryDeps,
  delivery: DeliveryJobData,
  rerun: boolean,
): Promise<{ url: string; secret: string | null } | null> {
  const subscription = await em.findOne(WebhookSubscriptionSchema, { id: delivery.subscription_id });
  // Deleted: its delivery rows went with it, so there is nothing to record either.
  if (!subscription) return null;
  if (rerun && (await settled(em, delivery))) return null;
  if (!delivery.ping && (await switchedOffSince(em, subscription, Date.parse(delivery.queued_at)))) {
    const error = subscription.isActive
      ? 'dropped: the subscription was deactivated after this event was queued'
      : `dropped: the subscription is deactivated (${subscription.deactivationReason ?? 'inactive'})`;
    em.create(WebhookDeliverySchema, attemptRow(delivery, { status: 'abandoned', responseStatus: null, durationMs: 0, error }));
    await em.flush();
    return null;
  }
  const secret = subscription.secretCiphertext
    ? deps.crypto.decrypt(subscription.secretCiphertext, { siteId: subscription.siteId, table: 'webhook_subscription', column: 'secret_ciphertext', rowId: subscription.id })
    : null;
  return { url: subscription.url, secret };
}

/** Whether the event already succeeded or was given up for this subscription. */
async function settled(em: EntityManager, delivery: DeliveryJobData): Promise<boolean> {
  const final = await em.count(WebhookDeliverySchema, {
    subscriptionId: delivery.subscription_id,
    eventId: delivery.event_id,
    status: { $in: ['succeeded', 'abandoned'] },
  });
  return final > 0;
}

function judge(deps: DeliveryDeps, delivery: DeliveryJobData, result: PostResult): Verdict {
  if (result.kind === 'response' && result.status >= 200 && result.status < 300) return { status: 'succeeded', deactivate: null, retryInMs: null };
  // A ping is a one-off check of the endpoint: it is not retried and does not switch the subscription off.
  if (delivery.ping) return { status: 'abandoned', deactivate: null, retryInMs: null };
  const permanent = permanentFailure(result);
  if (permanent) return { status: 'abandoned', deactivate: permanent, retryInMs: null };
  if (delivery.attempt >= deps.retry.maxAttempts) return { status: 'abandoned', deactivate: 'retries_exhausted', retryInMs: null };
  const retryAfterMs = result.kind === 'response' ? result.retryAfterMs : null;
  return { status: 'failed', deactivate: null, retryInMs: nextDelayMs(deps.retry, delivery.attempt, retryAfterMs, deps.random) };
}

/** The failures that mean the endpoint is gone, not down. */
function permanentFailure(result: PostResult): DeactivationReason | null {
  if (result.kind === 'response') return result.status === 404 ? 'http_404' : result.status === 410 ? 'http_410' : null;
  return result.code === 'ENOTFOUND' ? 'unresolvable_host' : null;
}

/** @returns whether this attempt deactivated the subscription */
async function record(em: EntityManager, deps: DeliveryDeps, delivery: DeliveryJobData, result: PostResult, verdict: Verdict): Promise<boolean> {
  em.create(
    WebhookDeliverySchema,
    attemptRow(delivery, {
      status: verdict.status,
      responseStatus: result.kind === 'response' ? result.status : null,
      durationMs: result.durationMs,
      error: describeFailure(result),
    }),
  );
  await em.flush();
  if (verdict.retryInMs !== null) {
    await enqueueDelivery(deps.queue, { ...delivery, attempt: delivery.attempt + 1 }, { delayMs: verdict.retryInMs, transaction: em });
  }
  if (!verdict.deactivate) return false;
  const requestId = `webhook.${delivery.event_id}`;
  return deactivateSubscription(em, { siteId: delivery.site_id, subscriptionId: delivery.subscription_id, reason: verdict.deactivate, now: deps.clock.now(), requestId });
}

function attemptRow(
  delivery: DeliveryJobData,
  outcome: { status: Verdict['status']; responseStatus: number | null; durationMs: number; error: string | null },
) {
  return {
    id: newId('webhookDelivery'),
    siteId: delivery.site_id,
    subscriptionId: delivery.subscription_id,
    eventId: delivery.event_id,
    event: delivery.event,
    attempt: delivery.attempt,
    ...outcome,
  };
}

function describeFailure(result: PostResult): string | null {
  if (result.kind === 'error') return `${result.code}: ${result.message}`;
  if (result.status >= 200 && result.status < 300) return null;
  return `HTTP ${result.status}`;
}
