import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { createPasswordResetHandler, PASSWORD_RESETS_QUEUE } from '../auth/password-reset-queue.ts';
import type { Clock } from '../clock.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';
import { createNotificationHandler } from './deliver-notification.ts';
import { createNotificationRelay, NOTIFICATIONS_QUEUE, type NotificationRelay } from './notification-relay.ts';

/** The services the notification workers use (a subset of the app's `Services`). */
export type NotificationServices = {
  db: { orm: MikroORM };
  queue: DurableQueue;
  crypto: FieldCrypto;
  logger: Logger;
  clock: Clock;
  /** `webhookAllowLoopback` (tests only) lets SMTP reach a loopback server too. */
  config: { webhookAllowLoopback: boolean; requeueGraceSeconds: number };
};

export type NotificationDelivery = { relay: NotificationRelay; close(): Promise<void> };

/**
 * Starts notification delivery in this process: the relay that queues committed messages for real providers, the
 * `notifications` queue consumer that sends them, and the `password-resets` consumer that mails reset links (without
 * it, reset requests wait on their queue). Any number of processes may run it. Stop the relay with
 * `close()`; the queue consumer stops with `services.queue.close()`.
 */
export async function startNotificationDelivery(services: NotificationServices, options: { pollIntervalMs?: number } = {}): Promise<NotificationDelivery> {
  const { queue, crypto, logger } = services;
  const orm = services.db.orm;
  await queue.process(NOTIFICATIONS_QUEUE, createNotificationHandler({ orm, crypto, logger, allowLoopback: services.config.webhookAllowLoopback }), {
    concurrency: 4,
    lockMs: 30_000,
  });
  await queue.process(PASSWORD_RESETS_QUEUE, createPasswordResetHandler({ orm, clock: services.clock }), { concurrency: 2 });
  const relay = createNotificationRelay({ orm, queue, logger, requeueGraceMs: services.config.requeueGraceSeconds * 1000, ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}) });
  relay.start();
  return { relay, close: () => relay.stop() };
}
