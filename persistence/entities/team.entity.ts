import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** A group of workers; membership is stored on the worker, so a team is only its name and description. */
export const TeamSchema = defineEntity({
  name: 'Team',
  tableName: 'team',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    name: p.string(),
    description: p.text().nullable(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type Team = InferEntity<typeof TeamSchema>;
