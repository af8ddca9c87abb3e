import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

export const ZONE_KINDS = ['service', 'banned'] as const;
export type ZoneKind = (typeof ZONE_KINDS)[number];

/** A GeoJSON position, longitude first. */
export type Position = [number, number];
export type ZoneGeometry = { type: 'Polygon'; coordinates: Position[][] } | { type: 'MultiPolygon'; coordinates: Position[][][] };

/** An area of the site: where it serves (`service`) or where no stop may be (`banned`, unless staff override). */
export const ZoneSchema = defineEntity({
  name: 'Zone',
  tableName: 'zone',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    name: p.string(),
    kind: p.string().$type<ZoneKind>(),
    geometry: p.json<ZoneGeometry>(),
    description: p.text().nullable(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type Zone = InferEntity<typeof ZoneSchema>;
