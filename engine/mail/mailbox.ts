import type { EntityManager } from '@mikro-orm/postgresql';
import { MailMessageSchema } from '../../persistence/entities/mail-message.entity.ts';
import { newId } from '../../persistence/ids.ts';

export type OutgoingMail = { siteId: string | null; to: string; subject: string; body: string };

/**
 * Sends a site's mail through its email integration; a site without one (the default) delivers to the
 * development mailbox, a table that platform operators read at GET /mailbox. The message commits with the change
 * that caused it, so a rolled-back request sends nothing.
 */
export function sendMail(em: EntityManager, mail: OutgoingMail): void {
  em.create(MailMessageSchema, { id: newId('mail'), siteId: mail.siteId, recipient: mail.to, subject: mail.subject, body: mail.body });
}
