import { Type } from 'typebox';
import type { ServiceType } from '../../persistence/entities/service-type.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';
import { Cents, Currency } from './money.schema.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Code = Type.String({ minLength: 1, maxLength: 32, description: 'short code, unique on the site' });
const DurationSeconds = Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'usual service time in seconds' });
const VehicleTypes = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50, description: 'vehicle types able to serve it' });

export const ServiceTypeResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    name: Type.String(),
    description: Nullable(Type.String()),
    code: Nullable(Type.String()),
    default_duration_seconds: Nullable(Type.Integer()),
    base_price_cents: Nullable(Type.Integer()),
    currency: Nullable(Type.String()),
    vehicle_types: Nullable(Type.Array(Type.String())),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateServiceTypeBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    code: Type.Optional(Code),
    default_duration_seconds: Type.Optional(DurationSeconds),
    base_price_cents: Type.Optional(Cents),
    currency: Type.Optional(Currency),
    vehicle_types: Type.Optional(VehicleTypes),
  },
  { additionalProperties: false },
);

export const UpdateServiceTypeBody = Type.Object(
  {
    id: Id,
    name: Type.Optional(Name),
    description: Clearable(Description),
    code: Clearable(Code),
    default_duration_seconds: Clearable(DurationSeconds),
    base_price_cents: Clearable(Cents),
    currency: Clearable(Currency),
    vehicle_types: Clearable(VehicleTypes),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export function toServiceTypeResponse(s: ServiceType) {
  return {
    id: s.id,
    site_id: s.siteId,
    name: s.name,
    description: s.description ?? null,
    code: s.code ?? null,
    default_duration_seconds: s.defaultDurationSeconds ?? null,
    base_price_cents: s.basePriceCents ?? null,
    currency: s.currency ?? null,
    vehicle_types: s.vehicleTypes ?? null,
    is_active: s.isActive,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}
