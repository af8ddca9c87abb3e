import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter } from './columns.ts';

/**
 * A short-lived access token of a user session. `sessionId` is the refresh-token family: revoking a family
 * deactivates its access tokens too. Only the token's SHA-256 is stored.
 */
export const AccessTokenSchema = defineEntity({
  name: 'AccessToken',
  tableName: 'access_token',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    sessionId: p.string(),
    siteId: p.string().nullable(),
    userId: p.string(),
    profileId: p.string().nullable(),
    applicationId: p.string().nullable(),
    tokenHash: p.string().unique(),
    expiresAt: p.datetime(),
    isActive: p.boolean().default(true),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type AccessToken = InferEntity<typeof AccessTokenSchema>;
