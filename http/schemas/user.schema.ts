import { Type } from 'typebox';
import type { UserView } from '../../engine/admin/user.service.ts';
import { SITE_ROLES } from '../permissions.ts';
import { AddressRequest, AddressResponse, toAddressResponse } from './address.schema.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';
import { contact } from './organization.schema.ts';

export const SiteRoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('dispatcher'), Type.Literal('driver'), Type.Literal('customer')]);
const Password = Type.String({ minLength: 8, maxLength: 200 });
const Name = Type.String({ minLength: 1, maxLength: 100 });

export const ProfileResponse = Type.Object(
  { id: Id, site_id: Id, user_id: Id, role: SiteRoleSchema, is_active: Type.Boolean(), created_at: Timestamp, updated_at: Timestamp },
  { additionalProperties: false },
);

export const UserResponse = Type.Object(
  {
    id: Id,
    email: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    display_name: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    phone_country: Nullable(Type.String()),
    organization_id: Nullable(Type.String()),
    home_address_id: Nullable(Type.String()),
    home_address: Nullable(AddressResponse),
    is_active: Type.Boolean(),
    is_platform_operator: Type.Boolean(),
    is_service_account: Type.Boolean(),
    profiles: Type.Array(ProfileResponse, { description: 'on a site host: this site only' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateUserBody = Type.Object(
  {
    email: contact.Email,
    password: Type.Optional(Password),
    first_name: Type.Optional(Name),
    last_name: Type.Optional(Name),
    display_name: Type.Optional(Name),
    phone: Type.Optional(contact.Phone),
    phone_country: Type.Optional(contact.PhoneCountry),
    role: Type.Optional(SiteRoleSchema),
    organization_id: Type.Optional(Id),
    site_id: Type.Optional(Id),
  },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  {
    id: Id,
    email: Type.Optional(contact.Email),
    password: Type.Optional(Password),
    first_name: Clearable(Name),
    last_name: Clearable(Name),
    display_name: Clearable(Name),
    phone: Clearable(contact.Phone),
    phone_country: Clearable(contact.PhoneCountry),
    role: Type.Optional(SiteRoleSchema),
    site_id: Type.Optional(Id),
    is_active: Type.Optional(Type.Boolean()),
    home_address: Type.Optional(AddressRequest),
    home_address_id: Type.Optional(Type.String({ maxLength: 64, description: 'wins over home_address; "" clears' })),
  },
  { additionalProperties: false },
);

export function toProfileResponse(p: UserView['profiles'][number]) {
  return {
    id: p.id,
    site_id: p.siteId,
    user_id: p.userId,
    role: p.role as (typeof SITE_ROLES)[number],
    is_active: p.isActive,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export function toUserResponse({ user, profiles, homeAddress }: UserView) {
  return {
    id: user.id,
    email: user.email,
    first_name: user.firstName ?? null,
    last_name: user.lastName ?? null,
    display_name: user.displayName ?? null,
    phone: user.phone ?? null,
    phone_country: user.phoneCountry ?? null,
    organization_id: user.organizationId ?? null,
    home_address_id: user.homeAddressId ?? null,
    home_address: homeAddress ? toAddressResponse(homeAddress) : null,
    is_active: user.isActive,
    is_platform_operator: user.isPlatformOperator,
    is_service_account: user.isServiceAccount,
    profiles: profiles.map(toProfileResponse),
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
  };
}
