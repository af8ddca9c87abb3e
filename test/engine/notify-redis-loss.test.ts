import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotificationRelay, NOTIFICATIONS_QUEUE } from '../../engine/notify/notification-relay.ts';
import { sendNotification } from '../../engine/notify/send-notification.ts';
import { startNotificationDelivery, type NotificationDelivery } from '../../engine/notify/start-notification-delivery.ts';
import { NotificationMessageSchema } from '../../persistence/entities/notification-message.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { useOneSite } from '../support/one-site.ts';
import { deleteRedisKeys } from '../support/redis-keys.ts';
import { connectSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * A notification is acknowledged once its row commits; the queue job that sends it lives in Redis, which keeps
 * nothing on disk. A message whose job Redis lost after it was queued must still be sent (once), not stay pending.
 */
const SMTP_PASSWORD = 'smtp-password-for-redis-loss';
const site = useOneSite({ WEBHOOK_ALLOW_LOOPBACK: 'true', REQUEUE_GRACE_SECONDS: '1' });
let smtp: SmtpReceiver;
let delivery: NotificationDelivery | null = null;

beforeAll(async () => {
  smtp = await connectSmtpReceiver(site.acme, SMTP_PASSWORD);
});
afterAll(async () => {
  await delivery?.close();
  await smtp.close();
});

describe('a queued notification whose job Redis lost', () => {
  it('is queued again after the grace period and sent once', async () => {
    const { services } = site.server;
    const message = await inTenantScope(services.db.orm, { siteId: site.acme.site.id }, (em) =>
      sendNotification(em, site.acme.site.id, { channel: 'email', to: 'lost@acme.example', subject: 'Lost', body: 'Sent after all' }),
    );
    expect(message.status).toBe('pending');
    // Queued (and stamped) with no consumer running yet, then Redis loses the job.
    const relay = createNotificationRelay({ orm: services.db.orm, queue: services.queue, logger: services.logger, requeueGraceMs: 3_600_000 });
    expect(await relay.relayOnce()).toBeGreaterThanOrEqual(1);
    await relay.stop();
    await deleteRedisKeys(services.redis!, `${services.config.redisPrefix}:${NOTIFICATIONS_QUEUE}`);
    expect(await services.queue.getJob(NOTIFICATIONS_QUEUE, message.id)).toBeNull();

    delivery = await startNotificationDelivery(services, { pollIntervalMs: 50 });
    const sent = await waitFor(
      'the lost message, sent',
      async () => {
        const row = await inTenantScope(services.db.orm, { siteId: site.acme.site.id }, (em) => em.findOneOrFail(NotificationMessageSchema, { id: message.id }));
        return row.status === 'sent' ? row : null;
      },
      15_000,
    );
    expect(sent.attempts).toBe(1);
    expect(smtp.received.filter((m) => m.raw.includes('Sent after all'))).toHaveLength(1);
  }, 60_000);
});
