import { Type } from 'typebox';
import type { Zone } from '../../persistence/entities/zone.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
export const ZoneKind = Type.Union([Type.Literal('service'), Type.Literal('banned')], { description: 'service: where the site works; banned: no stop may be inside' });

/**
 * GeoJSON order: longitude first; altitude is refused (zones are flat). An array, not a tuple, because OpenAPI 3.0
 * has no tuples: the schema bounds both numbers by the longitude range, the engine checks latitude within ±90.
 */
const Position = Type.Unsafe<[number, number]>(
  Type.Array(Type.Number({ minimum: -180, maximum: 180 }), { minItems: 2, maxItems: 2, description: '[lng, lat]' }),
);
/** A closed ring (last position repeats the first), so a triangle has 4 positions. Closure is checked by the engine. */
const Ring = Type.Array(Position, { minItems: 4, maxItems: 1000 });
const PolygonRings = Type.Array(Ring, { minItems: 1, maxItems: 20, description: 'the shell, then any holes' });

const Polygon = Type.Object({ type: Type.Literal('Polygon'), coordinates: PolygonRings }, { additionalProperties: false });
const MultiPolygon = Type.Object(
  { type: Type.Literal('MultiPolygon'), coordinates: Type.Array(PolygonRings, { minItems: 1, maxItems: 50 }) },
  { additionalProperties: false },
);
export const ZoneGeometry = Type.Union([Polygon, MultiPolygon], { description: 'GeoJSON Polygon or MultiPolygon, at most 5000 vertices' });

export const ZoneResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    name: Type.String(),
    kind: Type.String(),
    geometry: ZoneGeometry,
    description: Nullable(Type.String()),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateZoneBody = Type.Object(
  { name: Name, kind: ZoneKind, geometry: ZoneGeometry, description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const UpdateZoneBody = Type.Object(
  {
    id: Id,
    name: Type.Optional(Name),
    kind: Type.Optional(ZoneKind),
    geometry: Type.Optional(ZoneGeometry),
    description: Clearable(Description),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export function toZoneResponse(z: Zone) {
  return {
    id: z.id,
    site_id: z.siteId,
    name: z.name,
    kind: z.kind,
    geometry: z.geometry,
    description: z.description ?? null,
    is_active: z.isActive,
    created_at: z.createdAt.toISOString(),
    updated_at: z.updatedAt.toISOString(),
  };
}
