import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/**
 * One email, SMS or push message of a site and its delivery state. For the development providers this row is the
 * outbox itself (sent at commit); for real providers it is the durable record a queue worker delivers and retries.
 */
export const NotificationMessageSchema = defineEntity({
  name: 'NotificationMessage',
  tableName: 'notification_message',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    channel: p.string(),
    recipient: p.string(),
    subject: p.string().nullable(),
    body: p.text(),
    /** The integration key chosen when the message was written. */
    provider: p.string(),
    status: p.string(),
    attempts: p.integer().default(0),
    lastError: p.string().nullable(),
    providerMessageId: p.string().nullable(),
    queuedAt: p.datetime().nullable(),
    sentAt: p.datetime().nullable(),
    ...timestamps(),
  },
});

export type NotificationMessage = InferEntity<typeof NotificationMessageSchema>;
