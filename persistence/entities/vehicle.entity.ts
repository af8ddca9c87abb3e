import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** What a vehicle can carry; every limit optional (a bike courier may only count items). */
export type VehicleCapacity = { weight_kg?: number; volume_m3?: number; items?: number };

/** A vehicle of the site's fleet. */
export const VehicleSchema = defineEntity({
  name: 'Vehicle',
  tableName: 'vehicle',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    name: p.string(),
    /** One of the API's vehicle types (car, van, ...). */
    type: p.string(),
    plateNumber: p.string().nullable(),
    capacity: p.json<VehicleCapacity>().nullable(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type Vehicle = InferEntity<typeof VehicleSchema>;
