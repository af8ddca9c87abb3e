import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERED_BODY } from '../../engine/notify/deliver-notification.ts';
import { sendNotification, type NotificationInput } from '../../engine/notify/send-notification.ts';
import { startNotificationDelivery, type NotificationDelivery } from '../../engine/notify/start-notification-delivery.ts';
import { MailMessageSchema } from '../../persistence/entities/mail-message.entity.ts';
import { NotificationMessageSchema, type NotificationMessage } from '../../persistence/entities/notification-message.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { type SiteFixture } from '../support/fixtures.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { useTwoSites } from '../support/two-sites.ts';
import { waitFor } from '../support/wait-for.ts';

const SMTP_PASSWORD = 'smtp-password-for-notify';
const sites = useTwoSites({ WEBHOOK_ALLOW_LOOPBACK: 'true' });
let smtp: SmtpReceiver;
let delivery: NotificationDelivery;

beforeAll(async () => {
  smtp = await startSmtpReceiver({ username: 'dispatch', password: SMTP_PASSWORD });
  delivery = await startNotificationDelivery(sites.server.services, { pollIntervalMs: 50 });
});
afterAll(async () => {
  await delivery.close();
  await smtp.close();
});

const send = (site: SiteFixture, input: NotificationInput) =>
  inTenantScope(sites.server.services.db.orm, { siteId: site.site.id }, (em) => sendNotification(em, site.site.id, input));
const readMessage = (site: SiteFixture, id: string) =>
  inTenantScope(sites.server.services.db.orm, { siteId: site.site.id }, (em) => em.findOneOrFail(NotificationMessageSchema, { id }));

describe('notifications without integrations (development outboxes)', () => {
  it('delivers email to the development mailbox at commit', async () => {
    const message = await send(sites.globex, { channel: 'email', to: 'Someone@Globex.example', subject: 'Your courier', body: 'is 5 minutes away' });
    expect(message).toMatchObject({ provider: 'mailbox', status: 'sent', recipient: 'someone@globex.example' });
    const mail = await inTenantScope(sites.server.services.db.orm, { siteId: sites.globex.site.id }, (em) =>
      em.find(MailMessageSchema, { recipient: 'someone@globex.example' }),
    );
    expect(mail.map((m) => m.body)).toEqual(['is 5 minutes away']);
  });

  it("keeps SMS and push in the site's outbox, readable by its admins only", async () => {
    await send(sites.acme, { channel: 'sms', to: '+15550001111', body: 'Driver arriving' });
    await send(sites.acme, { channel: 'push', to: 'usr_push_target', subject: 'Update', body: 'Job started' });
    const outbox = await sites.acme.as.admin.get<{ data: { channel: string; recipient: string; body: string; provider: string; status: string }[] }>(
      '/api/notification/outbox?channel=sms',
    );
    expect(outbox.status).toBe(200);
    expect(outbox.body.data).toEqual([expect.objectContaining({ recipient: '+15550001111', body: 'Driver arriving', provider: 'sms_outbox', status: 'sent' })]);
    const push = await sites.acme.as.admin.get<{ data: { provider: string }[] }>('/api/notification/outbox?channel=push');
    expect(push.body.data.map((m) => m.provider)).toEqual(['push_outbox']);
    expect((await sites.globex.as.admin.get<{ data: unknown[] }>('/api/notification/outbox?channel=sms')).body.data).toEqual([]);
    expect((await sites.acme.as.dispatcher.get('/api/notification/outbox')).status).toBe(403);
  });

  it('sends nothing when the caller rolls back', async () => {
    await expect(
      inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, async (em) => {
        await sendNotification(em, sites.acme.site.id, { channel: 'sms', to: '+15559999999', body: 'never' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const outbox = await sites.acme.as.admin.get<{ data: unknown[] }>('/api/notification/outbox?recipient=%2B15559999999');
    expect(outbox.body.data).toEqual([]);
  });
});

describe('notifications through an SMTP integration', () => {
  beforeAll(async () => {
    const connected = await sites.acme.as.admin.post('/api/integration/connect', {
      integration_key: 'smtp',
      config: { host: '127.0.0.1', port: smtp.port, username: 'dispatch', password: SMTP_PASSWORD, from_address: 'dispatch@acme.example', from_name: 'Acme' },
    });
    if (connected.status !== 200) throw new Error(`SMTP connect failed: ${connected.status} ${connected.text}`);
  });

  it('an email sent through the configured SMTP integration arrives at the SMTP server', async () => {
    const message = await send(sites.acme, { channel: 'email', to: 'customer@acme.example', subject: 'Your delivery', body: 'Arriving at 14:05' });
    expect(message).toMatchObject({ provider: 'smtp', status: 'pending' });
    const mail = await waitFor('the mail at the SMTP server', () => smtp.received.find((m) => m.raw.includes('Arriving at 14:05')));
    expect(mail.to).toEqual(['customer@acme.example']);
    expect(mail.from).toBe('dispatch@acme.example');
    expect(mail.raw).toContain('Subject: Your delivery');
    const sent = await waitFor('the message marked sent', async () => {
      const row = await readMessage(sites.acme, message.id);
      return row.status === 'sent' ? row : null;
    });
    expect(sent).toMatchObject({ attempts: 1, body: DELIVERED_BODY, lastError: null });
    expect(sent.providerMessageId).toBeTruthy();
  });

  it('retries a refused delivery through the queue and records the attempts', async () => {
    smtp.refuseNext(1);
    const message = await send(sites.acme, { channel: 'email', to: 'retry@acme.example', subject: 'Retry', body: 'Second time lucky' });
    const sent = await waitFor(
      'the message sent on its second attempt',
      async () => {
        const row: NotificationMessage = await readMessage(sites.acme, message.id);
        return row.status === 'sent' ? row : null;
      },
      15_000,
    );
    expect(sent.attempts).toBe(2);
    expect(smtp.received.filter((m) => m.raw.includes('Second time lucky'))).toHaveLength(1);
  });

  it("sends the site's password reset mail through its SMTP server, not the mailbox", async () => {
    const response = await sites.server.client('acme').post('/api/auth/password/reset', { email: sites.acme.users.dispatcher.email });
    expect(response.status).toBeLessThan(300);
    const mail = await waitFor('the reset mail at the SMTP server', () => smtp.received.find((m) => m.to.includes(sites.acme.users.dispatcher.email)));
    expect(mail.raw).toMatch(/dtk_/);
    const mailbox = await inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) =>
      em.count(MailMessageSchema, { recipient: sites.acme.users.dispatcher.email }),
    );
    expect(mailbox).toBe(0);
  });
  it("mails the reset of an account shared with another site through the platform's mailbox, never the site's SMTP server", async () => {
    // Acme links Globex's admin as its customer: the account is Globex's too, so Acme's mail must not carry its token.
    const email = sites.globex.users.admin.email;
    expect((await sites.acme.as.admin.post('/api/customer', { email })).status).toBe(201);
    expect((await sites.server.client('acme').post('/api/auth/password/reset', { email })).status).toBe(202);
    const mailbox = await waitFor('the reset mail in the mailbox', async () => {
      const mails = await inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) => em.find(MailMessageSchema, { recipient: email }));
      return mails.length > 0 ? mails : null;
    });
    expect(mailbox).toHaveLength(1);
    expect(mailbox[0]!.body).toMatch(/dtk_/);
    const outbox = await sites.acme.as.admin.get<{ data: unknown[] }>(`/api/notification/outbox?recipient=${encodeURIComponent(email)}`);
    expect(outbox.body.data).toEqual([]);
    // The site's own users still get theirs through its SMTP server (the test above), and this one reached none.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received.filter((m) => m.to.includes(email))).toEqual([]);
  });

  it('a password set through the site’s own mail counts as one its staff set: it signs in on that site only', async () => {
    const email = 'reset-through-acme@example.com';
    expect((await sites.acme.as.admin.post('/api/customer', { email })).status).toBe(201);
    expect((await sites.server.client('acme').post('/api/auth/password/reset', { email })).status).toBe(202);
    const mail = await waitFor('the reset mail at the SMTP server', () => smtp.received.find((m) => m.to.includes(email)));
    // Quoted-printable breaks long lines with a soft '=' break: undo it before reading the token.
    const token = /dtk_[A-Za-z0-9_-]+/.exec(mail.raw.replace(/=\r?\n/g, ''))![0];
    expect((await sites.server.client('acme').post('/api/auth/password/confirm', { token, new_password: 'chosen-through-acme-mail' })).status).toBe(200);
    expect((await sites.globex.as.admin.post('/api/customer', { email })).status).toBe(201);
    const signIn = (site: string) => sites.server.client(site).post('/api/auth/signin', { email, password: 'chosen-through-acme-mail' });
    expect((await signIn('acme')).status).toBe(200);
    expect((await signIn('globex')).status).toBe(401);
  });
});

describe('notification input', () => {
  it('refuses an email notification without an address and an empty body, writing nothing', async () => {
    await expect(send(sites.acme, { channel: 'email', to: 'not-an-address', subject: 's', body: 'b' })).rejects.toMatchObject({ code: 'INVALID_NOTIFICATION', field: 'to' });
    await expect(send(sites.acme, { channel: 'sms', to: '+15550002222', body: '' })).rejects.toMatchObject({ code: 'INVALID_NOTIFICATION', field: 'body' });
    const outbox = await sites.acme.as.admin.get<{ data: unknown[] }>('/api/notification/outbox?recipient=not-an-address');
    expect(outbox.body.data).toEqual([]);
  });
});
