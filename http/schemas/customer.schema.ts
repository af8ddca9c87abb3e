import { Type } from 'typebox';
import type { CustomerView } from '../../engine/catalog/customer-admin.ts';
import { AddressRequest, AddressResponse, toAddressResponse } from './address.schema.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';
import { CustomFieldValuesBody, CustomFieldValuesResponse } from './customfield.schema.ts';
import { contact } from './organization.schema.ts';

const Name = Type.String({ minLength: 1, maxLength: 100 });
const Password = Type.String({ minLength: 8, maxLength: 200 });
const HomeAddressId = Type.String({ maxLength: 64, description: 'wins over home_address; on update "" clears it' });

/** A customer of the site; `id` is the user id a job takes as `customer_user_id`. */
export const CustomerResponse = Type.Object(
  {
    id: Id,
    email: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    phone_country: Nullable(Type.String()),
    home_address_id: Nullable(Type.String()),
    home_address: Nullable(AddressResponse),
    custom_fields: CustomFieldValuesResponse,
    is_active: Type.Boolean({ description: 'whether the customer profile on this site is active' }),
    customer_since: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateCustomerBody = Type.Object(
  {
    email: contact.Email,
    password: Type.Optional(Password),
    first_name: Type.Optional(Name),
    last_name: Type.Optional(Name),
    phone: Type.Optional(contact.Phone),
    phone_country: Type.Optional(contact.PhoneCountry),
    home_address: Type.Optional(AddressRequest),
    home_address_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'wins over home_address' })),
    custom_fields: Type.Optional(CustomFieldValuesBody),
  },
  { additionalProperties: false },
);

export const UpdateCustomerBody = Type.Object(
  {
    id: Id,
    email: Type.Optional(contact.Email),
    password: Type.Optional(Password),
    first_name: Clearable(Name),
    last_name: Clearable(Name),
    phone: Clearable(contact.Phone),
    phone_country: Clearable(contact.PhoneCountry),
    home_address: Type.Optional(AddressRequest),
    home_address_id: Type.Optional(HomeAddressId),
    is_active: Type.Optional(Type.Boolean()),
    custom_fields: Type.Optional(CustomFieldValuesBody),
  },
  { additionalProperties: false, description: 'only supplied fields change' },
);

export const CustomerMetricsResponse = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    active_in_range: Type.Integer({ description: 'distinct customers with a job created in the range' }),
    new_in_range: Type.Integer({ description: 'customers added to the site in the range' }),
    total_customers: Type.Integer({ description: 'active customers added before the end of the range' }),
    customer_cancellation_rate: Type.Number({ minimum: 0, maximum: 1, description: "cancelled share of the range's jobs" }),
  },
  { additionalProperties: false },
);

export function toCustomerResponse({ user, profile, homeAddress }: CustomerView) {
  return {
    id: user.id,
    email: user.email,
    first_name: user.firstName ?? null,
    last_name: user.lastName ?? null,
    phone: user.phone ?? null,
    phone_country: user.phoneCountry ?? null,
    home_address_id: user.homeAddressId ?? null,
    home_address: homeAddress ? toAddressResponse(homeAddress) : null,
    custom_fields: profile.customFields ?? {},
    is_active: profile.isActive && user.isActive,
    customer_since: profile.createdAt.toISOString(),
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
  };
}
