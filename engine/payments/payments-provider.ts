import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { DomainError } from '../domain-error.ts';
import { activeIntegration } from '../integrations/active-integration.ts';
import { DEVELOPMENT_DEFAULTS } from '../integrations/providers.ts';

/** What a payments provider tells us about a payment method it holds: never the card number. */
export type PaymentMethodDetails = { brand: string; last4: string; exp_month: number; exp_year: number };

/** A payments provider: looks up a payment method the customer's app tokenized with the provider. */
export type PaymentsProvider = {
  key: string;
  /** @throws DomainError 422 PAYMENT_METHOD_REJECTED when the provider does not know or refuses the id */
  describePaymentMethod(providerPaymentMethodId: string): Promise<PaymentMethodDetails>;
};

const BRANDS = ['visa', 'mastercard', 'amex', 'discover'] as const;

/**
 * The development provider: accepts any id shaped like `pm_<letters, digits, _>` and derives stable details from
 * it (a brand named in the id wins, e.g. `pm_card_mastercard`; 4 trailing digits become last4), so tests and demos
 * work offline. Anything else is refused as a real provider would refuse an unknown id.
 */
export const developmentPayments: PaymentsProvider = {
  key: 'development_payments',
  async describePaymentMethod(id) {
    if (!/^pm_[A-Za-z0-9_]{1,96}$/.test(id)) {
      throw new DomainError(422, 'PAYMENT_METHOD_REJECTED', 'The payments provider refused this payment method: ids start with pm_', 'provider_payment_method_id');
    }
    const digest = createHash('sha256').update(id).digest();
    const named = BRANDS.find((brand) => id.toLowerCase().includes(brand));
    const trailing = /(\d{4})$/.exec(id)?.[1];
    return {
      brand: named ?? BRANDS[digest[0]! % BRANDS.length]!,
      last4: trailing ?? String(digest.readUInt16BE(1) % 10_000).padStart(4, '0'),
      exp_month: (digest[3]! % 12) + 1,
      exp_year: 2030 + (digest[4]! % 5),
    };
  },
};

/**
 * The site's payments provider: its active payments integration, else the development provider.
 * @throws DomainError 422 PAYMENTS_PROVIDER_UNAVAILABLE for a configured provider with no adapter in this build
 */
export async function paymentsProviderFor(em: EntityManager, crypto: FieldCrypto, siteId: string): Promise<PaymentsProvider> {
  const active = await activeIntegration(em, crypto, siteId, 'payments');
  const key = active?.provider ?? DEVELOPMENT_DEFAULTS.payments;
  if (key === developmentPayments.key) return developmentPayments;
  throw DomainError.unprocessable('PAYMENTS_PROVIDER_UNAVAILABLE', `The payments provider ${key} has no adapter in this build`);
}
