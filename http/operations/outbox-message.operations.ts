import { Type } from 'typebox';
import type { NotificationChannel } from '../../engine/notify/send-notification.ts';
import { NotificationMessageSchema, type NotificationMessage } from '../../persistence/entities/notification-message.entity.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { Id, Nullable, Timestamp } from '../schemas/common.schema.ts';

const SORTABLE = { created_at: 'createdAt', id: 'id' };
const Channel = Type.Union([Type.Literal('email'), Type.Literal('sms'), Type.Literal('push')]);
const Status = Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed')]);

const NotificationResponse = Type.Object(
  {
    id: Id,
    channel: Channel,
    recipient: Type.String(),
    subject: Nullable(Type.String()),
    body: Type.String({ description: 'kept for development outboxes; replaced by a marker once a real provider delivered it' }),
    provider: Type.String(),
    status: Status,
    attempts: Type.Integer(),
    last_error: Nullable(Type.String()),
    sent_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export const outboxMessageOperations = [
  defineOperation({
    id: 'notification.outbox',
    method: 'GET',
    path: '/notification/outbox',
    summary: "The site's email, SMS and push notifications with their delivery state (the development SMS and push outbox), newest first",
    tag: 'Integrations',
    access: 'notification.read',
    host: 'site',
    query: Type.Object(
      { channel: Type.Optional(Channel), status: Type.Optional(Status), recipient: Type.Optional(Type.String({ maxLength: 254 })), ...pagingQuery(SORTABLE) },
      { additionalProperties: false },
    ),
    response: SearchResponse(NotificationResponse),
    handler: async ({ query, transaction }) => {
      const paging = readPaging(query, SORTABLE, '-created_at');
      const where = {
        ...(query.channel ? { channel: query.channel } : {}),
        ...(query.status ? { status: query.status } : {}),
        ...(query.recipient ? { recipient: query.channel === 'email' ? query.recipient.toLowerCase() : query.recipient } : {}),
      };
      const [rows, total] = await transaction((em) =>
        em.findAndCount(NotificationMessageSchema, where, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy }),
      );
      return searchBody(rows.map(toNotificationResponse), total, paging);
    },
  }),
];

function toNotificationResponse(m: NotificationMessage) {
  return {
    id: m.id,
    channel: m.channel as NotificationChannel,
    recipient: m.recipient,
    subject: m.subject ?? null,
    body: m.body,
    provider: m.provider,
    status: m.status as 'pending' | 'sent' | 'failed',
    attempts: m.attempts,
    last_error: m.lastError ?? null,
    sent_at: m.sentAt?.toISOString() ?? null,
    created_at: m.createdAt.toISOString(),
  };
}
