import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { timestamps } from './columns.ts';

export const SiteSchema = defineEntity({
  name: 'Site',
  tableName: 'site',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    name: p.string(),
    subdomain: p.string().unique(),
    description: p.text().nullable(),
    email: p.string().nullable(),
    phone: p.string().nullable(),
    phoneCountry: p.string().nullable(),
    website: p.string().nullable(),
    addressId: p.string().nullable(),
    currency: p.string(),
    timezone: p.string(),
    industryType: p.string().nullable(),
    notes: p.text().nullable(),
    unitSystem: p.string(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type Site = InferEntity<typeof SiteSchema>;
