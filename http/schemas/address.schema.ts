import { Type } from 'typebox';
import type { Address } from '../../persistence/entities/address.entity.ts';
import { Clearable, Id, Nullable, Point, Timestamp } from './common.schema.ts';

const Line = Type.String({ minLength: 1, maxLength: 300 });

/** The spec's AddressRequest: every field optional; without a point, the site's geocoder (if any) finds it from the text. */
export const AddressRequest = Type.Object(
  {
    street_address: Type.Optional(Line),
    street_address2: Type.Optional(Line),
    city: Type.Optional(Line),
    state: Type.Optional(Line),
    postal_code: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
    country: Type.Optional(Line),
    point: Type.Optional(Point),
  },
  { additionalProperties: false },
);

/** An address's text fields as an update takes them (a value sets, null clears): PUT /address and a stop update. */
export const addressTextUpdate = {
  street_address: Clearable(Line),
  street_address2: Clearable(Line),
  city: Clearable(Line),
  state: Clearable(Line),
  postal_code: Clearable(Type.String({ minLength: 1, maxLength: 20 })),
  country: Clearable(Line),
};

export const UpdateAddressBody = Type.Object(
  {
    id: Id,
    ...addressTextUpdate,
    point: Type.Optional(Point),
    override_zone_restriction: Type.Optional(Type.Boolean({ description: 'staff only: the point may move into a banned zone under an open stop; customers are always refused' })),
  },
  { additionalProperties: false },
);

const OptionalText = Nullable(Type.String());

export const AddressResponse = Type.Object(
  {
    id: Id,
    formatted_name: Type.String(),
    formatted_name_short: Type.String(),
    point: Point,
    street_address: OptionalText,
    street_address2: OptionalText,
    street: OptionalText,
    house_number: OptionalText,
    city: OptionalText,
    county: OptionalText,
    state: OptionalText,
    state_code: OptionalText,
    postal_code: OptionalText,
    country: OptionalText,
    country_code: OptionalText,
    site_id: Type.Optional(Type.String({ description: 'absent for global addresses' })),
    source: OptionalText,
    source_id: OptionalText,
    types: Type.Array(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export function toAddressResponse(a: Address) {
  return {
    id: a.id,
    formatted_name: a.formattedName,
    formatted_name_short: a.formattedNameShort,
    point: { lat: Number(a.lat), lng: Number(a.lng) },
    street_address: a.streetAddress ?? null,
    street_address2: a.streetAddress2 ?? null,
    street: a.street ?? null,
    house_number: a.houseNumber ?? null,
    city: a.city ?? null,
    county: a.county ?? null,
    state: a.state ?? null,
    state_code: a.stateCode ?? null,
    postal_code: a.postalCode ?? null,
    country: a.country ?? null,
    country_code: a.countryCode ?? null,
    ...(a.siteId ? { site_id: a.siteId } : {}),
    source: a.source ?? null,
    source_id: a.sourceId ?? null,
    types: a.types ?? [],
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}
