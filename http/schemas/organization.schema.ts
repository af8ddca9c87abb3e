import { Type } from 'typebox';
import type { Organization } from '../../persistence/entities/organization.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';

const Email = Type.String({ format: 'email', maxLength: 254 });
const Phone = Type.String({ minLength: 3, maxLength: 32 });
const PhoneCountry = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2' });

export const OrganizationResponse = Type.Object(
  {
    id: Id,
    name: Type.String(),
    description: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    phone_country: Nullable(Type.String()),
    address_id: Nullable(Type.String()),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateOrganizationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    email: Type.Optional(Email),
    phone: Type.Optional(Phone),
    phone_country: Type.Optional(PhoneCountry),
    address_id: Type.Optional(Id),
    latitude: Type.Optional(Type.Number({ minimum: -90, maximum: 90 })),
    longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
  },
  { additionalProperties: false },
);

export const UpdateOrganizationBody = Type.Object(
  {
    id: Id,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Clearable(Type.String({ maxLength: 2000 })),
    email: Clearable(Email),
    phone: Clearable(Phone),
    phone_country: Clearable(PhoneCountry),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const contact = { Email, Phone, PhoneCountry };

export function toOrganizationResponse(o: Organization) {
  return {
    id: o.id,
    name: o.name,
    description: o.description ?? null,
    email: o.email ?? null,
    phone: o.phone ?? null,
    phone_country: o.phoneCountry ?? null,
    address_id: o.addressId ?? null,
    latitude: o.latitude == null ? null : Number(o.latitude),
    longitude: o.longitude == null ? null : Number(o.longitude),
    is_active: o.isActive,
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
  };
}
