import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** An extra a job can carry ("fragile", "signature required"), optionally priced. */
export const OptionSchema = defineEntity({
  name: 'Option',
  // `option` alone reads like the SQL keyword in hand-written queries; the table says what the rows are.
  tableName: 'job_option',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    name: p.string(),
    description: p.text().nullable(),
    priceCents: p.integer().nullable(),
    currency: p.string().nullable(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type Option = InferEntity<typeof OptionSchema>;
