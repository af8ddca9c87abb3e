import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendNotification } from '../../engine/notify/send-notification.ts';
import { startNotificationDelivery, type NotificationDelivery } from '../../engine/notify/start-notification-delivery.ts';
import { NotificationMessageSchema } from '../../persistence/entities/notification-message.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { useOneSite } from '../support/one-site.ts';
import { APP_ROLE, urlFor } from '../support/postgres.ts';
import { connectSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

/**
 * The SMTP server accepted the message, then recording it as sent failed (a database blip, made here by a trigger
 * that refuses the `sent` update until the test drops it). The customer must get one email, not one per retry, and
 * every copy a resend could still make carries the same Message-ID.
 */
const SMTP_PASSWORD = 'smtp-password-for-send-once';
const site = useOneSite({ WEBHOOK_ALLOW_LOOPBACK: 'true' });
let smtp: SmtpReceiver;
let delivery: NotificationDelivery;
let admin: Client;

beforeAll(async () => {
  smtp = await connectSmtpReceiver(site.acme, SMTP_PASSWORD);
  admin = new Client({ connectionString: urlFor(site.server.database, 'postgres') });
  await admin.connect();
  delivery = await startNotificationDelivery(site.server.services, { pollIntervalMs: 50 });
});
afterAll(async () => {
  await delivery.close();
  await smtp.close();
  await admin.end();
});

describe('an SMTP send whose record fails', () => {
  it('is recorded again, not sent again, and its Message-ID comes from the notification', async () => {
    // The sequence counts refused updates (nextval survives the rollback the exception causes).
    await admin.query(`
      create sequence blip_count;
      grant usage on sequence blip_count to ${APP_ROLE};
      create function refuse_sent() returns trigger language plpgsql as $$
      begin
        perform nextval('blip_count');
        raise exception 'database blip while recording the send';
      end $$;
      create trigger refuse_sent before update on notification_message for each row when (new.status = 'sent') execute function refuse_sent();
    `);
    const { services } = site.server;
    const message = await inTenantScope(services.db.orm, { siteId: site.acme.site.id }, (em) =>
      sendNotification(em, site.acme.site.id, { channel: 'email', to: 'once@acme.example', subject: 'Once', body: 'Only one copy please' }),
    );
    await waitFor('a refused record of the sent message', async () => (await admin.query('select is_called from blip_count')).rows[0].is_called === true, 15_000);
    await admin.query('drop trigger refuse_sent on notification_message');

    await waitFor('the message recorded as sent', async () => {
      const row = await inTenantScope(services.db.orm, { siteId: site.acme.site.id }, (em) => em.findOneOrFail(NotificationMessageSchema, { id: message.id }));
      return row.status === 'sent';
    }, 15_000);
    // Longer than the queue's first backoff (2 s): a retry of the whole run would have sent a second copy by now.
    await sleep(3000);
    const copies = smtp.received.filter((mail) => mail.raw.includes('Only one copy please'));
    expect(copies).toHaveLength(1);
    expect(copies[0]!.raw).toMatch(new RegExp(`^Message-ID: <${message.id}@acme\\.example>`, 'im'));
  }, 60_000);
});
