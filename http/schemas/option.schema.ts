import { Type } from 'typebox';
import type { Option } from '../../persistence/entities/option.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';
import { Cents, Currency } from './money.schema.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });

export const OptionResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    name: Type.String(),
    description: Nullable(Type.String()),
    price_cents: Nullable(Type.Integer()),
    currency: Nullable(Type.String()),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateOptionBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    price_cents: Type.Optional(Cents),
    currency: Type.Optional(Currency),
  },
  { additionalProperties: false },
);

export const UpdateOptionBody = Type.Object(
  {
    id: Id,
    name: Type.Optional(Name),
    description: Clearable(Description),
    price_cents: Clearable(Cents),
    currency: Clearable(Currency),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export function toOptionResponse(o: Option) {
  return {
    id: o.id,
    site_id: o.siteId,
    name: o.name,
    description: o.description ?? null,
    price_cents: o.priceCents ?? null,
    currency: o.currency ?? null,
    is_active: o.isActive,
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
  };
}
