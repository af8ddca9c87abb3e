import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteOrGlobalFilter, timestamps } from './columns.ts';

export const AddressSchema = defineEntity({
  name: 'Address',
  tableName: 'address',
  filters: siteOrGlobalFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string().nullable(),
    formattedName: p.text(),
    formattedNameShort: p.text(),
    lat: p.double(),
    lng: p.double(),
    streetAddress: p.string().nullable(),
    streetAddress2: p.string().nullable(),
    street: p.string().nullable(),
    houseNumber: p.string().nullable(),
    city: p.string().nullable(),
    county: p.string().nullable(),
    state: p.string().nullable(),
    stateCode: p.string().nullable(),
    postalCode: p.string().nullable(),
    country: p.string().nullable(),
    countryCode: p.string().nullable(),
    source: p.string().nullable(),
    sourceId: p.string().nullable(),
    types: p.json<string[]>().nullable(),
    ...timestamps(),
  },
});

export type Address = InferEntity<typeof AddressSchema>;
