import { Type } from 'typebox';
import type { Site } from '../../persistence/entities/site.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';
import { contact } from './organization.schema.ts';

const Subdomain = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$',
  description: 'lowercase DNS label: the first label of the site host',
});
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' });
const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Paris' });
const UnitSystem = Type.Union([Type.Literal('metric'), Type.Literal('imperial')]);

export const SiteResponse = Type.Object(
  {
    id: Id,
    organization_id: Id,
    name: Type.String(),
    subdomain: Type.String(),
    description: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    phone_country: Nullable(Type.String()),
    website: Nullable(Type.String()),
    address_id: Nullable(Type.String()),
    currency: Type.String(),
    timezone: Type.String(),
    industry_type: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    unit_system: UnitSystem,
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

const Website = Type.String({ pattern: '^https?://', maxLength: 500 });

export const CreateSiteBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    organization_id: Id,
    subdomain: Subdomain,
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    email: Type.Optional(contact.Email),
    phone: Type.Optional(contact.Phone),
    phone_country: Type.Optional(contact.PhoneCountry),
    website: Type.Optional(Website),
    address_id: Type.Optional(Id),
    currency: Type.Optional(Currency),
    timezone: Type.Optional(Timezone),
    industry_type: Type.Optional(Type.String({ maxLength: 100 })),
    notes: Type.Optional(Type.String({ maxLength: 5000 })),
    unit_system: Type.Optional(UnitSystem),
  },
  { additionalProperties: false },
);

export const UpdateSiteBody = Type.Object(
  {
    id: Id,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    subdomain: Type.Optional(Subdomain),
    description: Clearable(Type.String({ maxLength: 2000 })),
    email: Clearable(contact.Email),
    phone: Clearable(contact.Phone),
    phone_country: Clearable(contact.PhoneCountry),
    website: Clearable(Website),
    address_id: Clearable(Id),
    currency: Type.Optional(Currency),
    timezone: Type.Optional(Timezone),
    notes: Clearable(Type.String({ maxLength: 5000 })),
    unit_system: Type.Optional(UnitSystem),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export function toSiteResponse(s: Site) {
  return {
    id: s.id,
    organization_id: s.organizationId,
    name: s.name,
    subdomain: s.subdomain,
    description: s.description ?? null,
    email: s.email ?? null,
    phone: s.phone ?? null,
    phone_country: s.phoneCountry ?? null,
    website: s.website ?? null,
    address_id: s.addressId ?? null,
    currency: s.currency,
    timezone: s.timezone,
    industry_type: s.industryType ?? null,
    notes: s.notes ?? null,
    unit_system: s.unitSystem as 'metric' | 'imperial',
    is_active: s.isActive,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}
