import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter } from './columns.ts';

/** The development mailbox: where a site without an email integration sends its mail, readable by operators. */
export const MailMessageSchema = defineEntity({
  name: 'MailMessage',
  tableName: 'mail_message',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string().nullable(),
    recipient: p.string(),
    subject: p.string(),
    body: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type MailMessage = InferEntity<typeof MailMessageSchema>;
