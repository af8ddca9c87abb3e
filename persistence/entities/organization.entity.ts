import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { timestamps } from './columns.ts';

export const OrganizationSchema = defineEntity({
  name: 'Organization',
  tableName: 'organization',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    description: p.text().nullable(),
    email: p.string().nullable(),
    phone: p.string().nullable(),
    phoneCountry: p.string().nullable(),
    addressId: p.string().nullable(),
    latitude: p.double().nullable(),
    longitude: p.double().nullable(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type Organization = InferEntity<typeof OrganizationSchema>;
