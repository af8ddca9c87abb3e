import { randomBytes } from 'node:crypto';
import { createEarningsConsumer } from '../../engine/earnings/record-earning.ts';
import { mappingPolicyOf } from '../../engine/eta/eta-check.ts';
import { EVENT_QUEUES } from '../../engine/outbox/event-queues.ts';
import { createOutboxRelay, type OutboxRelay } from '../../engine/outbox/outbox-relay.ts';
import { createBullmqQueue } from '../../engine/queue/bullmq-queue.ts';
import type { DurableQueue } from '../../engine/queue/durable-queue.ts';
import { createQueueSweeper, type QueueSweeper } from '../../engine/queue/queue-sweeper.ts';
import type { RetryPolicy } from '../../engine/webhooks/retry-policy.ts';
import { startWebhookDelivery, type WebhookDelivery } from '../../engine/webhooks/start-webhook-delivery.ts';
import { deleteRedisKeys } from './redis-keys.ts';
import type { TestServer } from './test-server.ts';
import { testCertificate } from './webhook-receiver.ts';

/**
 * A BullMQ queue under a Redis prefix of its own, on a test server whose own relay is stopped: this file's relay and
 * sweeper add to it, and its consumers (webhook delivery, earnings) start only when the test says, so a test can
 * make Redis lose the jobs (delete the prefix's keys) between the relay's hand-off and the first run.
 */
export type LossyQueue = {
  queue: DurableQueue;
  relay: OutboxRelay;
  /** Grace 0: every hand-off and due retry is looked at on each pass. */
  sweeper: QueueSweeper;
  /** Starts the webhook and earnings consumers (on a queue instance of their own, so they can be stopped). */
  startConsumers(): Promise<void>;
  stopConsumers(): Promise<void>;
  /** What a Redis restarted without persistence leaves: nothing under the prefix. */
  loseRedisData(): Promise<void>;
  close(): Promise<void>;
};

export function openLossyQueue(server: TestServer, retry: RetryPolicy): LossyQueue {
  const { services } = server;
  const redis = services.redis!;
  const prefix = `${services.config.redisPrefix}-lossy-${randomBytes(3).toString('hex')}`;
  const open = () => createBullmqQueue({ redis, prefix, logger: services.logger });
  const queue = open();
  const orm = services.db.orm;
  const relay = createOutboxRelay({ orm, queue, logger: services.logger });
  const sweeper = createQueueSweeper({ orm, queue, logger: services.logger, graceMs: 0, intervalMs: 3_600_000 });
  let consumers: { queue: DurableQueue; delivery: WebhookDelivery } | null = null;
  const stopConsumers = async () => {
    if (!consumers) return;
    await consumers.queue.close();
    consumers.delivery.close();
    consumers = null;
  };
  return {
    queue,
    relay,
    sweeper,
    async startConsumers() {
      const own = open();
      const delivery = await startWebhookDelivery(
        { ...services, queue: own, config: { webhookAllowLoopback: true, redisPrefix: prefix } },
        { ca: testCertificate().cert, retry, lockMs: 2000 },
      );
      await own.process(EVENT_QUEUES.earnings, createEarningsConsumer({ orm, logger: services.logger, crypto: services.crypto, mappingPolicy: mappingPolicyOf(services.config) }));
      consumers = { queue: own, delivery };
    },
    stopConsumers,
    loseRedisData: () => deleteRedisKeys(redis, prefix),
    async close() {
      await relay.stop();
      await sweeper.stop();
      await stopConsumers();
      await queue.close();
      await deleteRedisKeys(redis, prefix);
    },
  };
}
