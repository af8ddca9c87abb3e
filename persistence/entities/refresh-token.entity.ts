import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter } from './columns.ts';

/** One link of a rotating refresh-token family (`sessionId`). A used token presented again revokes the family. */
export const RefreshTokenSchema = defineEntity({
  name: 'RefreshToken',
  tableName: 'refresh_token',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    sessionId: p.string(),
    siteId: p.string().nullable(),
    userId: p.string(),
    profileId: p.string().nullable(),
    tokenHash: p.string().unique(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type RefreshToken = InferEntity<typeof RefreshTokenSchema>;
