import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/**
 * A customer's saved payment method on a site, as the payments provider described it (brand, last 4 digits,
 * expiry): never card numbers. Exactly one default per customer (a partial unique index backs the service).
 */
export const PaymentMethodSchema = defineEntity({
  name: 'PaymentMethod',
  tableName: 'payment_method',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    customerUserId: p.string(),
    provider: p.string(),
    providerPaymentMethodId: p.string(),
    brand: p.string().nullable(),
    last4: p.string().nullable(),
    expMonth: p.integer().nullable(),
    expYear: p.integer().nullable(),
    isDefault: p.boolean().default(false),
    ...timestamps(),
  },
});

export type PaymentMethod = InferEntity<typeof PaymentMethodSchema>;
