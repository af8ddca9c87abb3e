import type { MikroORM } from '@mikro-orm/postgresql';
import type { DurableQueue, JobHandler, JsonValue } from '../queue/durable-queue.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { deliveryJob, WEBHOOKS_QUEUE, serializeEnvelope } from './delivery-job.ts';
import { matchesEvent } from './event-filter.ts';
import { createSiteBatcher } from './site-batcher.ts';

export type EventConsumerDeps = { orm: MikroORM; queue: DurableQueue };

/** The part of an `events` job this consumer reads (the relay also sends the entity's type, id and version). */
type EventJobData = { outbox_id: string; site_id: string; event: string; timestamp: string; data: JsonValue };

/**
 * The handler of the legacy `events` queue, kept to drain what an older version queued there (the outbox relay now
 * fans out itself, relay-fan-out.ts, with the same job ids, so an event found in both places is delivered once): fans one event out into one delivery job per active subscription of the
 * event's site whose filter selects it (exact name, `entity:*` or `*`). It runs bound to that site, so row-level
 * security shows it only that site's subscriptions. The body is serialized here, once, and every attempt sends those
 * bytes. Delivery job ids are `${eventId}.${subscriptionId}`, so a fan-out that runs again (a crash, a retry) adds
 * nothing twice.
 *
 * A subscription created after the event was committed may or may not receive it, depending on when this runs;
 * one deactivated before then does not. The subscriptions are read after the job started, so always after the
 * event's commit; the reads of the site's events fanned out at the same time are one query (see site-batcher.ts).
 */
export function createEventConsumer(deps: EventConsumerDeps): JobHandler {
  const activeSubscriptions = createSiteBatcher<null, ActiveSubscription[]>(async (siteId, requests) => {
    const rows = await inTenantScope(deps.orm, { siteId }, (em) =>
      // The site named too, not only by row-level security (not enforced on PGlite): another site's subscription never gets this event.
      em.execute<ActiveSubscription[]>('select id, events from webhook_subscription where is_active and site_id = ? order by id', [siteId]),
    );
    return requests.map(() => rows);
  });
  return async (job) => {
    const event = readEventJob(job.data);
    const subscriptions = await activeSubscriptions(event.site_id, null);
    const matching = subscriptions.filter((subscription) => matchesEvent(subscription.events, event.event));
    if (matching.length === 0) return;
    const body = serializeEnvelope(event.outbox_id, event.event, event.timestamp, event.data);
    // Wall time, like the audit log's: a switch-off recorded after this drops the delivery (see readTargets in delivery-records.ts).
    const queuedAt = new Date().toISOString();
    const jobs = matching.map((subscription) =>
      deliveryJob({
        event_id: event.outbox_id,
        event: event.event,
        site_id: event.site_id,
        subscription_id: subscription.id,
        body,
        attempt: 1,
        queued_at: queuedAt,
        ping: false,
      }),
    );
    await deps.queue.addMany(WEBHOOKS_QUEUE, jobs);
  };
}

type ActiveSubscription = { id: string; events: string[] };

/** @throws Error when the job is not an outbox event (its run fails and stays visible in the queue) */
function readEventJob(data: JsonValue): EventJobData {
  const value = data as Partial<EventJobData> | null;
  if (!value || typeof value !== 'object' || typeof value.outbox_id !== 'string' || typeof value.site_id !== 'string'
    || typeof value.event !== 'string' || typeof value.timestamp !== 'string') {
    throw new Error('malformed events job: outbox_id, site_id, event and timestamp are required');
  }
  return { ...(value as EventJobData), data: value.data ?? null };
}
