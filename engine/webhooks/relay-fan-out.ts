import type { JsonValue, NewJob } from '../queue/durable-queue.ts';
import { deliveryBatchJob, envelopeOfOutbox, type DeliveryBatchJobData } from './delivery-job.ts';
import { matchesEvent } from './event-filter.ts';

/** The part of a relayed outbox row the fan-out reads. */
export type FanOutEvent = { id: string; site_id: string; event: string; payload: { [key: string]: JsonValue } };

/** An active subscription of the event's site: its id and event filters. */
export type ActiveSubscription = { id: string; events: string[] };

/**
 * The SQL expression (a JSON array of {@link ActiveSubscription}, ordered by id) of the active subscriptions of the
 * site in `siteColumn`, for the relay to read them in the statement that takes its batch.
 */
export const ACTIVE_SUBSCRIPTIONS_OF_SITE = (siteColumn: string): string =>
  `(select coalesce(json_agg(json_build_object('id', s.id, 'events', s.events) order by s.id), '[]'::json)
    from webhook_subscription s where s.is_active and s.site_id = ${siteColumn})`;

/**
 * The webhook fan-out of a relayed batch, run by the outbox relay inside its transaction (after it locked the rows):
 * for each active subscription of the batch's sites, one delivery job carrying the events of the batch its filter
 * selects (exact name, `entity:*` or `*`), in outbox order. The relay reads the subscriptions in the statement that
 * takes its batch ({@link ACTIVE_SUBSCRIPTIONS_OF_SITE}), so the fan-out costs one bulk add, and the queue runs one
 * job per subscription and batch rather than one per event (each event is still its own POST).
 *
 * Durability is the relay's: the jobs are added in its transaction (the table queue commits them with the
 * delete of the batch's `outbox_pending` entries; BullMQ adds them first, and a relay that dies before its commit sends the batch again, which
 * the batch job id and the delivery claims make a no-op, see delivery-job.ts). A subscription created after the
 * event was committed may or may not receive it, depending on when the relay runs; one deactivated before then does
 * not. The bodies are serialized here, once, and every attempt sends those bytes.
 *
 * @param subscriptionsOf the active subscriptions of a site of the batch, read in the relay's platform-scoped transaction
 * @param options `queuedAt` (default now) and `resumed`, for the batches the queue sweeper adds again (see {@link DeliveryBatchJobData})
 */
export function webhookDeliveriesFor(
  events: readonly FanOutEvent[],
  subscriptionsOf: (siteId: string) => readonly ActiveSubscription[],
  options: { queuedAt?: string; resumed?: boolean } = {},
): NewJob[] {
  const batches = new Map<string, DeliveryBatchJobData>();
  // Wall time, like the audit log's: a switch-off recorded after this drops the delivery (see readTargets in delivery-records.ts).
  const queuedAt = options.queuedAt ?? new Date().toISOString();
  for (const event of events) {
    const matching = subscriptionsOf(event.site_id).filter((subscription) => matchesEvent(subscription.events, event.event));
    if (matching.length === 0) continue;
    const body = envelopeOfOutbox(event.id, event.event, event.payload);
    for (const subscription of matching) {
      let batch = batches.get(subscription.id);
      if (!batch) {
        batch = { site_id: event.site_id, subscription_id: subscription.id, queued_at: queuedAt, events: [], ...(options.resumed ? { resumed: true } : {}) };
        batches.set(subscription.id, batch);
      }
      batch.events.push({ event_id: event.id, event: event.event, body });
    }
  }
  return [...batches.values()].map(deliveryBatchJob);
}
