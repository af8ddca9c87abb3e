import type { EntityManager } from '@mikro-orm/postgresql';
import type { JsonValue, NewJob } from '../queue/durable-queue.ts';
import { deliveryJob, serializeEnvelope } from './delivery-job.ts';
import { matchesEvent } from './event-filter.ts';

/** The part of a relayed outbox row the fan-out reads. */
export type FanOutEvent = { id: string; site_id: string; event: string; payload: { [key: string]: JsonValue } };

type ActiveSubscription = { site_id: string; id: string; events: string[] };

/**
 * The webhook fan-out of a relayed batch, run by the outbox relay inside its transaction (after it locked the rows,
 * before it stamps them relayed): one delivery job per event and active subscription of the event's site whose filter
 * selects it (exact name, `entity:*` or `*`). The subscriptions of every site in the batch are one query, so a batch
 * of 200 events costs one round trip here and one bulk add, instead of a queue job and a transaction per event.
 *
 * Durability is the relay's: the jobs are added in its transaction (the table queue commits them with the
 * `relayed_at` stamp; BullMQ adds them first, and a relay that dies before its commit sends the batch again, which
 * the job ids `${eventId}.${subscriptionId}` make a no-op). A subscription created after the event was committed
 * may or may not receive it, depending on when the relay runs; one deactivated before then does not. The body is
 * serialized here, once, and every attempt sends those bytes.
 *
 * @param tx the relay's platform-scoped transaction (it reads every site's subscriptions)
 */
export async function webhookDeliveriesFor(tx: EntityManager, events: readonly FanOutEvent[]): Promise<NewJob[]> {
  if (events.length === 0) return [];
  const siteIds = [...new Set(events.map((event) => event.site_id))];
  const rows = await tx.execute<ActiveSubscription[]>(
    'select site_id, id, events from webhook_subscription where is_active and site_id in (?) order by id',
    [siteIds],
  );
  if (rows.length === 0) return [];
  const bySite = new Map<string, ActiveSubscription[]>();
  for (const row of rows) {
    const ofSite = bySite.get(row.site_id);
    if (ofSite) ofSite.push(row);
    else bySite.set(row.site_id, [row]);
  }
  // Wall time, like the audit log's: a switch-off recorded after this drops the delivery (see readTargets in delivery-records.ts).
  const queuedAt = new Date().toISOString();
  const jobs: NewJob[] = [];
  for (const event of events) {
    const matching = (bySite.get(event.site_id) ?? []).filter((subscription) => matchesEvent(subscription.events, event.event));
    if (matching.length === 0) continue;
    const { timestamp, data } = event.payload;
    const body = serializeEnvelope(event.id, event.event, typeof timestamp === 'string' ? timestamp : '', data ?? null);
    for (const subscription of matching) {
      jobs.push(deliveryJob({
        event_id: event.id, event: event.event, site_id: event.site_id, subscription_id: subscription.id, body, attempt: 1, queued_at: queuedAt, ping: false,
      }));
    }
  }
  return jobs;
}
