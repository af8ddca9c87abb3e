import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { NotificationMessageSchema, type NotificationMessage } from '../../persistence/entities/notification-message.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { configuredIntegration } from '../integrations/active-integration.ts';
import type { JobHandler } from '../queue/durable-queue.ts';
import { NOTIFICATION_ATTEMPTS } from './notification-relay.ts';
import { notificationMessageId, sendSmtpMail, type SmtpConfig } from './smtp-sender.ts';

/** What a provider needs to send one message: its decrypted config and the message. Returns the provider's id. */
type Sender = (config: Record<string, unknown>, message: NotificationMessage, options: { allowLoopback: boolean }) => Promise<string>;

/** Real providers with a delivery adapter in this build, by integration key. */
const SENDERS: Readonly<Record<string, Sender>> = {
  smtp: (config, message, options) => {
    const smtp = config as SmtpConfig;
    const messageId = notificationMessageId(message.id, smtp.from_address);
    return sendSmtpMail(smtp, { to: message.recipient, subject: message.subject ?? '', body: message.body, messageId }, options);
  },
};

/** Stored instead of a delivered message's body, which may carry one-time tokens (password reset). */
export const DELIVERED_BODY = '[delivered: body not kept]';

export type NotificationDeliveryDeps = { orm: MikroORM; crypto: FieldCrypto; logger: Logger; allowLoopback: boolean };

/**
 * The `notifications` queue's handler: one delivery attempt. The message is read (with its provider's config) in
 * one transaction, sent outside any transaction, and the outcome written in another. A failed send is recorded and
 * rethrown so the queue retries with backoff; the last attempt marks the message failed. A message that was sent is
 * not sent again because its record failed (a database blip): the record is retried here, for about a minute
 * ({@link RECORD_RETRY_MS}), before the run fails. Only a record that fails longer than that, or a process that dies
 * between the send and the record, sends it again, under the same Message-ID. Idempotent: a message no longer
 * pending is skipped.
 */
export function createNotificationHandler(deps: NotificationDeliveryDeps): JobHandler {
  return async (job) => {
    const { notification_id: id, site_id: siteId } = job.data as { notification_id: string; site_id: string };
    const loaded = await inTenantScope(deps.orm, { siteId }, async (em) => {
      const message = await em.findOne(NotificationMessageSchema, { id });
      if (!message || message.status !== 'pending') return null;
      return { message, integration: await configuredIntegration(em, deps.crypto, siteId, message.provider) };
    });
    if (!loaded) return;
    const { message, integration } = loaded;
    const sender = Object.hasOwn(SENDERS, message.provider) ? SENDERS[message.provider] : undefined;
    if (!sender || !integration) {
      await record(deps, siteId, id, { failed: true, error: sender ? `integration ${message.provider} was removed` : `no delivery adapter for ${message.provider} in this build` });
      return;
    }
    let providerMessageId: string;
    try {
      providerMessageId = await sender(integration.config, message, { allowLoopback: deps.allowLoopback });
    } catch (error) {
      const last = job.attempt >= NOTIFICATION_ATTEMPTS;
      const reason = error instanceof Error ? error.message.slice(0, 500) : 'unknown error';
      await record(deps, siteId, id, { failed: last, error: reason });
      deps.logger.warn({ notification_id: id, provider: message.provider, attempt: job.attempt, err: reason }, 'notification delivery failed');
      if (!last) throw error;
      return;
    }
    await recordSent(deps, siteId, id, providerMessageId);
  };
}

/** Waits between tries of recording a sent message: about a minute in all, within the job's renewed lock. */
const RECORD_RETRY_MS = [250, 500, 1000, 2000, 4000, 8000, 16_000, 32_000] as const;

async function recordSent(deps: NotificationDeliveryDeps, siteId: string, id: string, providerMessageId: string): Promise<void> {
  for (const wait of [0, ...RECORD_RETRY_MS]) {
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      await record(deps, siteId, id, { providerMessageId });
      return;
    } catch (error) {
      if (wait === RECORD_RETRY_MS.at(-1)) throw error;
      deps.logger.warn({ notification_id: id, err: error }, 'notification sent but not recorded yet; recording it again, not sending it');
    }
  }
}

type Outcome = { providerMessageId: string } | { failed: boolean; error: string };

async function record(deps: NotificationDeliveryDeps, siteId: string, id: string, outcome: Outcome): Promise<void> {
  await inTenantScope(deps.orm, { siteId }, async (em) => {
    const message = await em.findOne(NotificationMessageSchema, { id });
    if (!message || message.status !== 'pending') return;
    message.attempts += 1;
    if ('providerMessageId' in outcome) {
      message.status = 'sent';
      message.sentAt = new Date();
      message.providerMessageId = outcome.providerMessageId;
      message.lastError = null;
      message.body = DELIVERED_BODY;
    } else {
      message.lastError = outcome.error;
      if (outcome.failed) {
        message.status = 'failed';
        message.body = DELIVERED_BODY.replace('delivered', 'failed');
      }
    }
    await em.flush();
  });
}
