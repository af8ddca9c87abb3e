import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** What a job is for (a delivery, an installation, ...): its usual service time, base price and vehicle needs. */
export const ServiceTypeSchema = defineEntity({
  name: 'ServiceType',
  tableName: 'service_type',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    name: p.string(),
    description: p.text().nullable(),
    /** Short code unique on the site (e.g. `EXP`), for integrations that refer to service types by code. */
    code: p.string().nullable(),
    defaultDurationSeconds: p.integer().nullable(),
    basePriceCents: p.integer().nullable(),
    currency: p.string().nullable(),
    vehicleTypes: p.json<string[]>().nullable(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type ServiceType = InferEntity<typeof ServiceTypeSchema>;
