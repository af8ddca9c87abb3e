import type { EntityManager } from '@mikro-orm/postgresql';
import { MailMessageSchema } from '../../persistence/entities/mail-message.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { hasEmailIntegration, sendNotification } from '../notify/send-notification.ts';

/** `platformOnly`: never through the site's email integration (mail the site's admins must not be able to read). */
export type OutgoingMail = { siteId: string | null; to: string; subject: string; body: string; platformOnly?: boolean };

/**
 * Sends a site's mail through its email integration (queued, retried: see `sendNotification`); a site without one
 * (the default) and the platform deliver to the development mailbox, a table that platform operators read at
 * GET /mailbox. Either way the message commits with the change that caused it, so a rolled-back request sends
 * nothing. Mailbox mail is not copied to the admin-readable notification outbox: it may carry reset tokens.
 */
export async function sendMail(em: EntityManager, mail: OutgoingMail): Promise<void> {
  if (mail.siteId && !mail.platformOnly && (await hasEmailIntegration(em, mail.siteId))) {
    await sendNotification(em, mail.siteId, { channel: 'email', to: mail.to, subject: mail.subject, body: mail.body });
    return;
  }
  em.create(MailMessageSchema, { id: newId('mail'), siteId: mail.siteId, recipient: mail.to, subject: mail.subject, body: mail.body });
}
