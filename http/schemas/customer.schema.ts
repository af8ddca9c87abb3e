import { Type } from 'typebox';
import type { User } from '../../persistence/entities/user.entity.ts';
import { Id, Nullable, Timestamp } from './common.schema.ts';

/** A customer as job forms pick one; `id` is the user id a job takes as `customer_user_id`. */
export const CustomerSummaryResponse = Type.Object(
  {
    id: Id,
    email: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    phone_country: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export function toCustomerSummaryResponse(u: User) {
  return {
    id: u.id,
    email: u.email,
    first_name: u.firstName ?? null,
    last_name: u.lastName ?? null,
    phone: u.phone ?? null,
    phone_country: u.phoneCountry ?? null,
    created_at: u.createdAt.toISOString(),
  };
}
