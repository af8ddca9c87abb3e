import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';
import { newId } from '../../persistence/ids.ts';
import { enqueueDelivery, PING_EVENT, serializeEnvelope } from './delivery-job.ts';
import { getWebhookSubscription } from './subscription.service.ts';

/**
 * Queues a `webhook:ping` to one subscription, due now, whatever its event filter. The ping is signed like any
 * delivery and recorded in its delivery log, but it is tried once and never deactivates the subscription, and it
 * goes to an inactive subscription too: it is how an operator checks an endpoint before reactivating it.
 *
 * @param em a transaction bound to the subscription's site (the table queue adds the job in it)
 * @returns the ping's event id (its `webhook-id` and body `id`)
 * @throws DomainError 404 when the subscription is absent or another site's
 */
export async function queueWebhookPing(
  em: EntityManager,
  deps: { queue: DurableQueue; clock: Clock },
  siteId: string,
  subscriptionId: string,
): Promise<string> {
  const subscription = await getWebhookSubscription(em, subscriptionId);
  const eventId = newId('webhookPing');
  const data = { webhook_id: subscription.id, url: subscription.url };
  await enqueueDelivery(
    deps.queue,
    {
      event_id: eventId,
      event: PING_EVENT,
      site_id: siteId,
      subscription_id: subscription.id,
      body: serializeEnvelope(eventId, PING_EVENT, deps.clock.now().toISOString(), data),
      attempt: 1,
      queued_at: new Date().toISOString(),
      ping: true,
    },
    { transaction: em },
  );
  return eventId;
}
