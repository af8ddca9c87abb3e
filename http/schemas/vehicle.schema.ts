import { Type } from 'typebox';
import { VEHICLE_TYPES } from '../../engine/fleet/vehicle.service.ts';
import type { Vehicle } from '../../persistence/entities/vehicle.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
export const VehicleType = Type.Union(VEHICLE_TYPES.map((t) => Type.Literal(t)), { description: VEHICLE_TYPES.join(', ') });
const PlateNumber = Type.String({ minLength: 1, maxLength: 32 });
const Capacity = Type.Object(
  {
    weight_kg: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
    volume_m3: Type.Optional(Type.Number({ minimum: 0, maximum: 10_000 })),
    items: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  { additionalProperties: false, description: 'what it can carry; a capacity given on update replaces the whole capacity' },
);

export const VehicleResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    name: Type.String(),
    type: Type.String(),
    plate_number: Nullable(Type.String()),
    capacity: Nullable(Capacity),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateVehicleBody = Type.Object(
  { name: Name, type: VehicleType, plate_number: Type.Optional(PlateNumber), capacity: Type.Optional(Capacity) },
  { additionalProperties: false },
);

export const UpdateVehicleBody = Type.Object(
  {
    id: Id,
    name: Type.Optional(Name),
    type: Type.Optional(VehicleType),
    plate_number: Clearable(PlateNumber),
    capacity: Clearable(Capacity),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export function toVehicleResponse(v: Vehicle) {
  return {
    id: v.id,
    site_id: v.siteId,
    name: v.name,
    type: v.type,
    plate_number: v.plateNumber ?? null,
    capacity: v.capacity ?? null,
    is_active: v.isActive,
    created_at: v.createdAt.toISOString(),
    updated_at: v.updatedAt.toISOString(),
  };
}
