import { Type } from 'typebox';
import type { PaymentMethod } from '../../persistence/entities/payment-method.entity.ts';
import { paymentMethodView } from '../../engine/payments/payment-method.service.ts';
import { Id, Nullable, Timestamp } from './common.schema.ts';

export const PaymentMethodResponse = Type.Object(
  {
    id: Id,
    customer_id: Id,
    provider: Type.String({ description: 'the payments integration that holds it' }),
    provider_payment_method_id: Type.String(),
    brand: Nullable(Type.String()),
    last4: Nullable(Type.String()),
    exp_month: Nullable(Type.Integer()),
    exp_year: Nullable(Type.Integer()),
    is_default: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreatePaymentMethodBody = Type.Object(
  {
    customer_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "the customer's user id; required for staff, a customer's own by default" })),
    provider_payment_method_id: Type.String({ minLength: 1, maxLength: 255, description: 'the id the payments provider gave the tokenized method' }),
    is_default: Type.Optional(Type.Boolean({ description: "true makes it the default (a customer's first method always is)" })),
  },
  { additionalProperties: false },
);

export const UpdatePaymentMethodBody = Type.Object(
  { is_default: Type.Optional(Type.Boolean({ description: 'true makes it the default, clearing the previous one' })) },
  { additionalProperties: false },
);

export function toPaymentMethodResponse(m: PaymentMethod) {
  return { ...paymentMethodView(m), created_at: m.createdAt.toISOString(), updated_at: m.updatedAt.toISOString() };
}
