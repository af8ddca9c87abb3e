import type { LookupFunction } from 'node:net';
import type { Redis } from 'ioredis';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { EVENTS_QUEUE } from '../outbox/outbox-relay.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { createDeliveryHandler } from './deliver.ts';
import { createDeliveryClaims } from './delivery-claims.ts';
import { WEBHOOKS_QUEUE } from './delivery-job.ts';
import { createEventConsumer } from './event-consumer.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';
import { createWebhookClient } from './webhook-client.ts';

/** The services the delivery workers use (a subset of the app's `Services`). */
export type WebhookServices = {
  db: { orm: MikroORM };
  queue: DurableQueue;
  crypto: FieldCrypto;
  logger: Logger;
  clock: Clock;
  /** The queue's Redis (null on the table queue): batch jobs claim their events there (delivery-claims.ts). */
  redis: Redis | null;
  /** `webhookAllowLoopback` (tests only) lets deliveries reach 127.0.0.0/8 and ::1; `redisPrefix` is the queue's. */
  config: { webhookAllowLoopback: boolean; redisPrefix: string };
};

/** Overrides for tests; production uses the defaults. */
export type WebhookDeliveryOptions = {
  retry?: RetryPolicy;
  /** Per request (ms). Default 10 000. */
  timeoutMs?: number;
  /** Certificates to trust instead of the system's (a test receiver's self-signed one). */
  ca?: string;
  lookup?: LookupFunction;
  random?: () => number;
  /** Delivery jobs run at once, and POSTs in flight, in this process. Default {@link DEFAULT_DELIVERY_CONCURRENCY}. */
  concurrency?: number;
  /** Jobs of the legacy `events` queue fanned out at once in this process. Default {@link DEFAULT_FAN_OUT_CONCURRENCY}. */
  fanOutConcurrency?: number;
  /** Queue lock of a running job (ms): how soon a job whose process died runs again. Default 10 000. */
  lockMs?: number;
};

/**
 * Delivery jobs run at once, and POSTs in flight, per process (a batch job's events share the POST cap). Concurrent
 * deliveries of a site share their SQL (site-batcher.ts), so more in flight means fewer transactions per delivery.
 * Each in-flight request costs a socket and a little memory; a slow receiver holds its slots until its timeout, so
 * 64 also leaves more room for the other receivers.
 */
export const DEFAULT_DELIVERY_CONCURRENCY = 64;
/**
 * Jobs of the legacy `events` queue run at once. The relay now fans out itself (relay-fan-out.ts) and adds nothing
 * there; the consumer stays to deliver events queued by an older version before an upgrade.
 */
export const DEFAULT_FAN_OUT_CONCURRENCY = 4;

export type WebhookDelivery = {
  /** Closes idle connections to receivers. The queue workers stop with `services.queue.close()`. */
  close(): void;
};

/**
 * Starts the webhook workers in this process: the `webhooks` consumer (the outbox relay adds one job per relayed
 * batch and subscription with the first attempts, relay-fan-out.ts; retries and pings are one job per attempt) and
 * the legacy `events` consumer (fan-out of events an older version queued). Call once per process, after the
 * database is migrated; any number of processes may run them (the queue gives each job to one worker at a time).
 */
export async function startWebhookDelivery(services: WebhookServices, options: WebhookDeliveryOptions = {}): Promise<WebhookDelivery> {
  const { queue, crypto, logger, clock } = services;
  const orm = services.db.orm;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const allowLoopback = services.config.webhookAllowLoopback;
  const client = createWebhookClient({ timeoutMs, allowLoopback, ...(options.ca ? { ca: options.ca } : {}), ...(options.lookup ? { lookup: options.lookup } : {}) });
  const lockMs = options.lockMs ?? 10_000;
  const concurrency = options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY;
  await queue.process(EVENTS_QUEUE, createEventConsumer({ orm, queue }), { concurrency: options.fanOutConcurrency ?? DEFAULT_FAN_OUT_CONCURRENCY, lockMs });
  await queue.process(
    WEBHOOKS_QUEUE,
    createDeliveryHandler({
      orm, queue, crypto, client, clock, logger, retry: options.retry ?? DEFAULT_RETRY_POLICY, ...(options.random ? { random: options.random } : {}),
      claims: createDeliveryClaims(queue.backend === 'bullmq' ? services.redis : null, services.config.redisPrefix),
      maxPosts: concurrency,
    }),
    { concurrency, lockMs },
  );
  if (allowLoopback) logger.warn('webhook deliveries may reach loopback addresses (WEBHOOK_ALLOW_LOOPBACK): for tests only');
  return { close: () => client.close() };
}
