import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter } from './columns.ts';

export const TICKET_PURPOSES = ['pre_auth', 'password_reset'] as const;
export type TicketPurpose = (typeof TICKET_PURPOSES)[number];

/** A single-use, short-lived token: a pre-authentication to finish by choosing a site, or a password reset. */
export const AuthTicketSchema = defineEntity({
  name: 'AuthTicket',
  tableName: 'auth_ticket',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    purpose: p.string().$type<TicketPurpose>(),
    siteId: p.string().nullable(),
    userId: p.string(),
    tokenHash: p.string().unique(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type AuthTicket = InferEntity<typeof AuthTicketSchema>;
