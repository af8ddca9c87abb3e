import { hash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { OUTLIVE_OUTAGES, type DurableQueue, type JsonValue, type NewJob } from '../queue/durable-queue.ts';

/**
 * The durable queue of webhook deliveries: one job per relayed batch and subscription (its first attempts), then one
 * job per retry of one event to one subscription (and per ping).
 */
export const WEBHOOKS_QUEUE = 'webhooks';

/** The event of `POST /webhook/test`. */
export const PING_EVENT = 'webhook:ping';

/** What a delivery job carries. Snake case: it is stored as JSON in Redis or `queue_job`. */
export type DeliveryJobData = {
  /** The event's id (its outbox row id, or the ping's id): the `webhook-id` header and the body's `id`. */
  event_id: string;
  event: string;
  site_id: string;
  subscription_id: string;
  /**
   * The exact request body, serialized once when the event was fanned out, so every attempt sends the same bytes
   * whatever the queue backend does to JSON key order (PostgreSQL's jsonb reorders keys).
   */
  body: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** When the event was fanned out to this subscription (ISO): a deactivation after it drops the delivery. */
  queued_at: string;
  /** A test ping: one attempt, delivered even to an inactive subscription, never deactivates it. */
  ping: boolean;
  /** Added again by the queue sweeper (see {@link DeliveryBatchJobData.resumed}). */
  resumed?: boolean;
};

/**
 * `${eventId}.${subscriptionId}` for the first attempt (fan-out run twice adds it once), then `.${attempt}` for each
 * retry. Never `:` (BullMQ's rule): event and subscription ids are prefixed ULIDs.
 */
export function deliveryJobId(eventId: string, subscriptionId: string, attempt: number): string {
  return attempt === 1 ? `${eventId}.${subscriptionId}` : `${eventId}.${subscriptionId}.${attempt}`;
}

/** The largest body sent: the spec's sample receiver takes at most 1 MiB. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/**
 * The request body: the spec's envelope `{event, timestamp, data}` plus the event id (`id`, stable across retries).
 * An entity too large for {@link MAX_WEBHOOK_BODY_BYTES} (a job of 200 stops with long notes) goes as its top-level
 * scalar fields with `truncated: true`, and the receiver reads the rest (`GET /job/{id}`, as the spec says for a
 * missed update): sent whole, every attempt met the receiver's 413 until retries ran out and switched the
 * subscription off, taking every other event with it.
 */
export function serializeEnvelope(eventId: string, event: string, timestamp: string, data: JsonValue): string {
  const body = JSON.stringify({ id: eventId, event, timestamp, data });
  if (Buffer.byteLength(body) <= MAX_WEBHOOK_BODY_BYTES) return body;
  const scalars = data !== null && typeof data === 'object' && !Array.isArray(data) ? Object.entries(data).filter(([, value]) => value === null || typeof value !== 'object') : [];
  return JSON.stringify({ id: eventId, event, timestamp, data: { ...Object.fromEntries(scalars), truncated: true } });
}

/**
 * The body of an outbox event as every attempt sends it (the payload's `timestamp` and `data`): the relay's fan-out
 * and the retry sweep build it here, so an event added again after Redis lost it is the same bytes.
 */
export function envelopeOfOutbox(eventId: string, event: string, payload: { [key: string]: JsonValue }): string {
  const { timestamp, data } = payload;
  return serializeEnvelope(eventId, event, typeof timestamp === 'string' ? timestamp : '', data ?? null);
}

/**
 * Adds one delivery attempt. In `transaction` (the table queue writes it there, so the next attempt commits with
 * the record of the failed one); BullMQ adds at once, and the job id makes a repeated add a no-op.
 */
export async function enqueueDelivery(
  queue: DurableQueue,
  data: DeliveryJobData,
  options: { delayMs?: number; transaction?: EntityManager } = {},
): Promise<void> {
  const job = deliveryJob(data);
  await queue.add(WEBHOOKS_QUEUE, job.name, job.data, { ...job.options, ...options });
}

/** The queue job of one delivery attempt, due now, for {@link DurableQueue.addMany} (a fan-out adds several at once). */
export function deliveryJob(data: DeliveryJobData): NewJob {
  return { name: data.event, data, options: { jobId: deliveryJobId(data.event_id, data.subscription_id, data.attempt), ...OUTLIVE_OUTAGES } };
}

/** One event of a {@link DeliveryBatchJobData}. */
export type BatchEvent = { event_id: string; event: string; body: string };

/**
 * The first attempts of a relayed batch's events to one subscription, in one job: BullMQ's cost per job is then
 * shared by the batch, while each event is still its own signed POST, attempt record and, when it fails, its own
 * retry job (a {@link DeliveryJobData} with `attempt` 2).
 */
export type DeliveryBatchJobData = {
  site_id: string;
  subscription_id: string;
  /** As {@link DeliveryJobData.queued_at}, for every event of the batch. */
  queued_at: string;
  /** In outbox order. */
  events: BatchEvent[];
  /**
   * Added again by the queue sweeper after the queue lost it (a Redis that restarted empty): its claims were lost
   * too, so each event is checked against the delivery log before it is sent, as on a rerun.
   */
  resumed?: boolean;
};

/** The job name of a batch (a single delivery's name is its event). */
export const BATCH_JOB_NAME = 'webhook:batch';

/**
 * `batch.${digest of every event id}.${subscriptionId}`: a batch relayed again with the same rows (a relay that died
 * between its add and its commit) adds nothing twice. A batch relayed again with other rows gets another id, even
 * with the same first and last events (an event that was not yet committed the first time, between them), and the
 * delivery claims (delivery-claims.ts) keep its events that the first job also carries from being sent twice.
 */
export function batchJobId(subscriptionId: string, events: readonly BatchEvent[]): string {
  return `batch.${hash('sha1', events.map((event) => event.event_id).join(','), 'base64url')}.${subscriptionId}`;
}

/** The queue job of a batch's first attempts, due now. */
export function deliveryBatchJob(data: DeliveryBatchJobData): NewJob {
  return { name: BATCH_JOB_NAME, data, options: { jobId: batchJobId(data.subscription_id, data.events), ...OUTLIVE_OUTAGES } };
}

/** Each event of a batch as the single delivery (first attempt) it stands for. */
export function batchDeliveries(batch: DeliveryBatchJobData): DeliveryJobData[] {
  return batch.events.map((event) => ({
    event_id: event.event_id, event: event.event, body: event.body,
    site_id: batch.site_id, subscription_id: batch.subscription_id, attempt: 1, queued_at: batch.queued_at, ping: false,
    ...(batch.resumed ? { resumed: true } : {}),
  }));
}

/** @throws Error when a job's data is not a batch */
export function readDeliveryBatchJob(data: JsonValue): DeliveryBatchJobData {
  const value = data as Partial<DeliveryBatchJobData> | null;
  const valid = !!value && typeof value === 'object' && typeof value.site_id === 'string' && typeof value.subscription_id === 'string'
    && typeof value.queued_at === 'string' && Array.isArray(value.events) && value.events.length > 0
    && value.events.every((e) => typeof e?.event_id === 'string' && typeof e.event === 'string' && typeof e.body === 'string');
  if (!valid) throw new Error('malformed webhook delivery batch job');
  return value as DeliveryBatchJobData;
}

/** @throws Error when a job's data is not a delivery (a job written by other code, or by an older version) */
export function readDeliveryJob(data: JsonValue): DeliveryJobData {
  const value = data as Partial<DeliveryJobData> | null;
  const strings = ['event_id', 'event', 'site_id', 'subscription_id', 'body', 'queued_at'] as const;
  if (!value || typeof value !== 'object' || strings.some((key) => typeof value[key] !== 'string') || !Number.isInteger(value.attempt)) {
    throw new Error('malformed webhook delivery job');
  }
  return { ...(value as DeliveryJobData), ping: value.ping === true };
}
