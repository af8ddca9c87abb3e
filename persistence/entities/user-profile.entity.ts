import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { CustomFieldValues } from './custom-field-definition.entity.ts';
import { siteFilter, timestamps } from './columns.ts';

/** A user's role on one site (user × site × role). */
export const UserProfileSchema = defineEntity({
  name: 'UserProfile',
  tableName: 'user_profile',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    userId: p.string(),
    role: p.string(),
    isActive: p.boolean().default(true),
    /** Custom field values by key, validated against the site's definitions (engine/customfields). */
    customFields: p.json<CustomFieldValues>().onCreate(() => ({})),
    ...timestamps(),
  },
});

export type UserProfile = InferEntity<typeof UserProfileSchema>;
