import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotificationRelay } from '../../engine/notify/notification-relay.ts';
import { sendNotification } from '../../engine/notify/send-notification.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { useOneSite } from '../support/one-site.ts';
import { connectSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';

/**
 * The embedded database (PGlite) serves one connection, and the table queue (no Redis) writes through the pool. The
 * sweep that adds stale notifications' jobs again must not hold that one connection in a transaction while the
 * queue waits for another: the whole server would stall behind it until the pool's acquire timeout, again and again.
 */
const site = useOneSite({ REDIS_URL: '', DATABASE_POOL_SIZE: '1', WEBHOOK_ALLOW_LOOPBACK: 'true' });
let smtp: SmtpReceiver;

// Mail through a real provider: only such messages are queued (the development mailbox is written at once).
beforeAll(async () => {
  smtp = await connectSmtpReceiver(site.acme, 'smtp-password-one-connection');
});
afterAll(() => smtp.close());

describe('the stale-notification sweep on a one-connection pool and the table queue', () => {
  it('adds the jobs again without waiting for a second connection', async () => {
    const { services } = site.server;
    const siteId = site.acme.site.id;
    await inTenantScope(services.db.orm, { siteId }, (em) => sendNotification(em, siteId, { channel: 'email', to: 'stale@acme.example', subject: 'Stale', body: 'Queued long ago' }));
    const relay = createNotificationRelay({ orm: services.db.orm, queue: services.queue, logger: services.logger, requeueGraceMs: 1 });
    expect(await relay.relayOnce()).toBeGreaterThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The next pass sweeps (its grace period has passed): it must finish well within the pool's acquire timeout.
    const started = Date.now();
    await relay.relayOnce();
    await relay.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 120_000);
});
