import { Type } from 'typebox';
import { MailMessageSchema } from '../../persistence/entities/mail-message.entity.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { Id, Nullable, Timestamp } from '../schemas/common.schema.ts';

const SORTABLE = { created_at: 'createdAt', id: 'id' };

const MailResponse = Type.Object(
  { id: Id, site_id: Nullable(Type.String()), recipient: Type.String(), subject: Type.String(), body: Type.String(), created_at: Timestamp },
  { additionalProperties: false },
);

export const mailboxOperations = [
  defineOperation({
    id: 'mailbox.search',
    method: 'GET',
    path: '/mailbox',
    summary: 'Read the development mailbox: mail of sites without an email integration (newest first)',
    tag: 'Operations',
    access: 'mailbox.read',
    host: 'platform',
    query: Type.Object(
      { site_id: Type.Optional(Id), recipient: Type.Optional(Type.String({ maxLength: 254 })), ...pagingQuery(SORTABLE) },
      { additionalProperties: false },
    ),
    response: SearchResponse(MailResponse),
    handler: async ({ query, principal, transaction }) => {
      const paging = readPaging(query, SORTABLE, '-created_at');
      const siteId = query.site_id ?? null;
      const [rows, total] = await transaction(
        (em) =>
          em.findAndCount(
            MailMessageSchema,
            query.recipient ? { recipient: query.recipient.toLowerCase() } : {},
            { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy },
          ),
        { siteId, userId: principal?.userId ?? null, platform: true },
      );
      const data = rows.map((m) => ({
        id: m.id,
        site_id: m.siteId ?? null,
        recipient: m.recipient,
        subject: m.subject,
        body: m.body,
        created_at: m.createdAt.toISOString(),
      }));
      return searchBody(data, total, paging);
    },
  }),
];
