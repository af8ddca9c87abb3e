import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { appendOutbox } from '../../persistence/outbox.ts';
import { PaymentMethodSchema, type PaymentMethod } from '../../persistence/entities/payment-method.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { newId } from '../../persistence/ids.ts';
import { DomainError } from '../domain-error.ts';
import { paymentsProviderFor } from './payments-provider.ts';

/** Who acts: customers manage only their own methods; staff name the customer. `now`: the events' time (the engine's clock). */
export type PaymentMethodContext = { actor: AuditActor; role: string; siteId: string; crypto: FieldCrypto; now: Date };

export type CreatePaymentMethodInput = { customer_id?: string; provider_payment_method_id: string; is_default?: boolean };

/**
 * Saves a payment method the customer tokenized with the site's payments provider, which must accept the id and
 * describes it (brand, last 4, expiry). A customer's first method becomes the default, as does one created with
 * `is_default: true` (the previous default is cleared in the same transaction).
 * @throws DomainError 400 CUSTOMER_REQUIRED, 404 (customer), 409 PAYMENT_METHOD_EXISTS, 422 PAYMENT_METHOD_REJECTED
 */
export async function createPaymentMethod(em: EntityManager, ctx: PaymentMethodContext, input: CreatePaymentMethodInput): Promise<PaymentMethod> {
  const customerId = await resolveCustomer(em, ctx, input.customer_id);
  const provider = await paymentsProviderFor(em, ctx.crypto, ctx.siteId);
  const details = await provider.describePaymentMethod(input.provider_payment_method_id);
  const methods = await lockCustomerMethods(em, ctx.siteId, customerId);
  if (await em.count(PaymentMethodSchema, { provider: provider.key, providerPaymentMethodId: input.provider_payment_method_id })) {
    throw new DomainError(409, 'PAYMENT_METHOD_EXISTS', 'This payment method is already saved', 'provider_payment_method_id');
  }
  const makeDefault = input.is_default === true || !methods.some((m) => m.isDefault);
  if (makeDefault) await clearDefault(em, ctx, methods, null);
  const method = em.create(PaymentMethodSchema, {
    id: newId('paymentMethod'),
    siteId: ctx.siteId,
    customerUserId: customerId,
    provider: provider.key,
    providerPaymentMethodId: input.provider_payment_method_id,
    brand: details.brand,
    last4: details.last4,
    expMonth: details.exp_month,
    expYear: details.exp_year,
    isDefault: makeDefault,
  });
  recordChange(em, ctx, 'create', method.id, null, paymentMethodView(method));
  await em.flush();
  return method;
}

/** A customer's saved methods, the default first, then newest first. */
export async function listPaymentMethods(em: EntityManager, ctx: PaymentMethodContext, customerId: string | undefined): Promise<PaymentMethod[]> {
  const customer = await resolveCustomer(em, ctx, customerId);
  return em.find(PaymentMethodSchema, { customerUserId: customer }, { orderBy: { isDefault: 'desc', createdAt: 'desc', id: 'desc' } });
}

/**
 * Makes a method its customer's default, clearing the old default in the same transaction. Calls for one customer
 * are serialized by a lock and a partial unique index allows one default, so concurrent calls leave exactly one.
 * Unsetting the default is refused: there is always one while any method is saved.
 * @throws DomainError 404, 409 DEFAULT_REQUIRED
 */
export async function updatePaymentMethod(em: EntityManager, ctx: PaymentMethodContext, id: string, patch: { is_default?: boolean }): Promise<PaymentMethod> {
  const found = await getPaymentMethod(em, ctx, id);
  const methods = await lockCustomerMethods(em, ctx.siteId, found.customerUserId);
  const method = methods.find((m) => m.id === id);
  if (!method) throw DomainError.notFound('PaymentMethod', id);
  if (patch.is_default === false && method.isDefault) {
    throw new DomainError(409, 'DEFAULT_REQUIRED', 'A customer always has a default payment method: make another one the default instead', 'is_default');
  }
  if (patch.is_default === true && !method.isDefault) {
    await clearDefault(em, ctx, methods, method.id);
    const before = paymentMethodView(method);
    method.isDefault = true;
    recordChange(em, ctx, 'update', id, before, paymentMethodView(method));
    await em.flush();
  }
  return method;
}

/** Deletes a method; deleting the default makes the newest remaining one the default. @throws DomainError 404 */
export async function deletePaymentMethod(em: EntityManager, ctx: PaymentMethodContext, id: string): Promise<void> {
  const found = await getPaymentMethod(em, ctx, id);
  const methods = await lockCustomerMethods(em, ctx.siteId, found.customerUserId);
  const method = methods.find((m) => m.id === id);
  if (!method) throw DomainError.notFound('PaymentMethod', id);
  recordChange(em, ctx, 'delete', id, paymentMethodView(method), null);
  em.remove(method);
  await em.flush();
  const successor = method.isDefault ? methods.filter((m) => m.id !== id).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0] : undefined;
  if (successor) {
    const before = paymentMethodView(successor);
    successor.isDefault = true;
    recordChange(em, ctx, 'update', successor.id, before, paymentMethodView(successor));
    await em.flush();
  }
}

/** One method the caller may see: a customer only their own (another's is 404, as if absent). */
export async function getPaymentMethod(em: EntityManager, ctx: PaymentMethodContext, id: string): Promise<PaymentMethod> {
  const method = await em.findOne(PaymentMethodSchema, { id });
  if (!method || (ctx.role === 'customer' && method.customerUserId !== ctx.actor.userId)) throw DomainError.notFound('PaymentMethod', id);
  return method;
}

type PaymentMethodView = ReturnType<typeof paymentMethodView>;

/**
 * A change of a saved method, in its transaction: the audit record, and the `payment_method:<action>` event (the
 * spec's payment events: webhooks and the dispatch console's feed) with the method as it is now (as it was, deleted).
 */
function recordChange(em: EntityManager, ctx: PaymentMethodContext, action: 'create' | 'update' | 'delete', id: string, before: PaymentMethodView | null, after: PaymentMethodView | null): void {
  recordAudit(em, ctx.actor, { siteId: ctx.siteId, action, entityType: 'PaymentMethod', entityId: id, before, after });
  const data = (after ?? before)!;
  appendOutbox(em, { siteId: ctx.siteId, event: `payment_method:${action}`, entityType: 'payment_method', entityId: id, entityVersion: null, data, timestamp: ctx.now });
}

/** What a caller sees of a method, less timestamps: the response's body and the audit record's before/after. */
export function paymentMethodView(m: PaymentMethod) {
  return {
    id: m.id,
    customer_id: m.customerUserId,
    provider: m.provider,
    provider_payment_method_id: m.providerPaymentMethodId,
    brand: m.brand ?? null,
    last4: m.last4 ?? null,
    exp_month: m.expMonth ?? null,
    exp_year: m.expYear ?? null,
    is_default: m.isDefault,
  };
}

/** Takes the customer's lock (held to commit), then reads their methods fresh: what other transactions committed. */
async function lockCustomerMethods(em: EntityManager, siteId: string, customerId: string): Promise<PaymentMethod[]> {
  await em.execute('select pg_advisory_xact_lock(hashtext(?))', [`payment-method:${siteId}:${customerId}`]);
  return em.find(PaymentMethodSchema, { customerUserId: customerId }, { refresh: true });
}

/** Clears the current default (except `keep`) and writes it, so the partial unique index sees it off first. */
async function clearDefault(em: EntityManager, ctx: PaymentMethodContext, methods: PaymentMethod[], keep: string | null): Promise<void> {
  for (const previous of methods.filter((m) => m.isDefault && m.id !== keep)) {
    const before = paymentMethodView(previous);
    previous.isDefault = false;
    recordChange(em, ctx, 'update', previous.id, before, paymentMethodView(previous));
  }
  await em.flush();
}

/** The customer whose methods are meant. @throws DomainError 400 CUSTOMER_REQUIRED, 404 not a customer of the site */
async function resolveCustomer(em: EntityManager, ctx: PaymentMethodContext, customerId: string | undefined): Promise<string> {
  if (ctx.role === 'customer') {
    const self = ctx.actor.userId;
    if (!self || (customerId !== undefined && customerId !== self)) throw customerNotFound(customerId ?? '');
    return self;
  }
  if (!customerId) throw DomainError.invalid('CUSTOMER_REQUIRED', 'customer_id is required', 'customer_id');
  const profile = await em.findOne(UserProfileSchema, { userId: customerId, role: 'customer', isActive: true });
  if (!profile) throw customerNotFound(customerId);
  return customerId;
}

function customerNotFound(id: string): DomainError {
  return new DomainError(404, 'NOT_FOUND', `Customer ${id} not found`, 'customer_id');
}
