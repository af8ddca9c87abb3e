import { OUTLIVE_OUTAGES, type JsonValue, type NewJob } from '../queue/durable-queue.ts';
import { WEBHOOKS_QUEUE } from '../webhooks/delivery-job.ts';
import { webhookDeliveriesFor, type ActiveSubscription } from '../webhooks/relay-fan-out.ts';
import { EVENT_QUEUE_READS, EVENT_QUEUES } from './event-queues.ts';

/** An outbox row as the relay (and the queue sweeper, when it adds a lost batch's jobs again) reads it. */
export type OutboxRow = {
  /** bigint, as text. */
  seq: string;
  id: string;
  site_id: string;
  event: string;
  entity_type: string;
  entity_id: string;
  entity_version: number | null;
  payload: { [key: string]: JsonValue };
};

/** The jobs of one queue, in the order they are added. */
export type QueueJobs = { queue: string; jobs: NewJob[] };

/**
 * Every job a relayed batch adds, by queue (queues without a job left out): each consumer's queue gets the events it
 * reads ({@link EVENT_QUEUE_READS}) in `seq` order, so an entity's events stay in order in every queue, and the
 * `webhooks` queue gets the fan-out (relay-fan-out.ts). A pure function of the rows and the subscriptions: the queue
 * sweeper, given the same rows and the subscriptions the relay read, builds the same job ids.
 *
 * @param fanOut `queuedAt` (default now) and `resumed` (the sweeper's: see DeliveryBatchJobData) for the webhook batches
 */
export function relayedJobs(
  rows: readonly OutboxRow[],
  subscriptionsOf: (siteId: string) => readonly ActiveSubscription[],
  fanOut: { queuedAt?: string; resumed?: boolean } = {},
): QueueJobs[] {
  const byQueue: QueueJobs[] = Object.values(EVENT_QUEUES).map((name) => ({
    queue: name,
    jobs: rows.filter((row) => EVENT_QUEUE_READS[name](row.event, row.payload.data)).map(toQueuedEvent),
  }));
  byQueue.push({ queue: WEBHOOKS_QUEUE, jobs: webhookDeliveriesFor(rows, subscriptionsOf, fanOut) });
  return byQueue.filter((entry) => entry.jobs.length > 0);
}

/** A relayed row as a consumer's queue job: name = the event, id = the outbox id, data = the envelope and where it belongs. */
function toQueuedEvent(row: OutboxRow): NewJob {
  return {
    name: row.event,
    data: {
      ...row.payload,
      outbox_id: row.id,
      site_id: row.site_id,
      entity_type: row.entity_type,
      entity_id: row.entity_id,
      entity_version: row.entity_version,
    } satisfies JsonValue,
    // Retries let a consumer outlive a passing outage (database, Redis) without losing the event: about an hour.
    options: { jobId: row.id, ...OUTLIVE_OUTAGES },
  };
}
