import type { EntityManager } from '@mikro-orm/postgresql';
import { MailMessageSchema } from '../../persistence/entities/mail-message.entity.ts';
import { NotificationMessageSchema, type NotificationMessage } from '../../persistence/entities/notification-message.entity.ts';
import { SiteIntegrationSchema } from '../../persistence/entities/site-integration.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { DomainError } from '../domain-error.ts';
import { DEVELOPMENT_DEFAULTS } from '../integrations/providers.ts';

export const NOTIFICATION_CHANNELS = ['email', 'sms', 'push'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/** `to`: an email address, a phone number in E.164, or a push token / user id, by channel. */
export type NotificationInput = { channel: NotificationChannel; to: string; subject?: string; body: string };

/** Providers whose outbox is this database: the message is delivered when the caller's transaction commits. */
const DEVELOPMENT_PROVIDERS = new Set(['mailbox', 'sms_outbox', 'push_outbox']);

/**
 * Sends a site's notification through its active integration for the channel (category email, sms or push),
 * or the development default (the mailbox; the SMS and push outboxes at GET /notification/outbox).
 *
 * Durable: the message is a row written in the caller's transaction, so a rolled-back change sends nothing.
 * Development providers deliver at commit (the row is the outbox); real providers (SMTP) are sent by the queue
 * worker started with `startNotificationDelivery`, retried with backoff, the outcome recorded on the row.
 * @throws DomainError 400 INVALID_NOTIFICATION for an empty recipient or body, or an email channel `to` that is no address
 */
export async function sendNotification(em: EntityManager, siteId: string, input: NotificationInput): Promise<NotificationMessage> {
  const to = input.to.trim();
  if (to === '' || input.body === '') throw DomainError.invalid('INVALID_NOTIFICATION', 'A notification needs a recipient and a body', to === '' ? 'to' : 'body');
  // A malformed address would only fail at the provider, retried for minutes: refuse it while the caller can react.
  if (input.channel === 'email' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(to)) {
    throw DomainError.invalid('INVALID_NOTIFICATION', 'An email notification needs an email address', 'to');
  }
  const active = await em.findOne(SiteIntegrationSchema, { siteId, category: input.channel, isActive: true });
  const provider = active?.integrationKey ?? DEVELOPMENT_DEFAULTS[input.channel]!;
  const delivered = DEVELOPMENT_PROVIDERS.has(provider);
  const now = new Date();
  const message = em.create(NotificationMessageSchema, {
    id: newId('notification'),
    siteId,
    channel: input.channel,
    recipient: input.channel === 'email' ? to.toLowerCase() : to,
    subject: input.subject ?? null,
    body: input.body,
    provider,
    status: delivered ? 'sent' : 'pending',
    attempts: delivered ? 1 : 0,
    lastError: null,
    providerMessageId: null,
    queuedAt: null,
    sentAt: delivered ? now : null,
  });
  if (provider === 'mailbox') {
    em.create(MailMessageSchema, { id: newId('mail'), siteId, recipient: message.recipient, subject: input.subject ?? '', body: input.body });
  }
  // Explicit flush: callers on the command path write raw SQL, which does not flush the unit of work for them.
  await em.flush();
  return message;
}

/** Whether the site sends email through a real provider (not the development mailbox). */
export async function hasEmailIntegration(em: EntityManager, siteId: string): Promise<boolean> {
  const active = await em.findOne(SiteIntegrationSchema, { siteId, category: 'email', isActive: true });
  return active !== null && !DEVELOPMENT_PROVIDERS.has(active.integrationKey);
}
