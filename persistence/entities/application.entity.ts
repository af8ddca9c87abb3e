import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** An API key holder. The key itself is shown once; only its SHA-256 is stored. */
export const ApplicationSchema = defineEntity({
  name: 'Application',
  tableName: 'application',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    organizationId: p.string(),
    name: p.string(),
    description: p.text().nullable(),
    role: p.string(),
    keyPrefix: p.string(),
    keyHash: p.string().unique(),
    serviceUserId: p.string(),
    packageName: p.string().nullable(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type Application = InferEntity<typeof ApplicationSchema>;
