import { Type } from 'typebox';
import { ListResponse, pageOfWholeList, pageQuery } from '../pagination.ts';
import type { Services } from '../../app/services.ts';
import {
  createPaymentMethod,
  deletePaymentMethod,
  listPaymentMethods,
  updatePaymentMethod,
  type PaymentMethodContext,
} from '../../engine/payments/payment-method.service.ts';
import type { AuditActor } from '../../persistence/audit.ts';
import type { Site } from '../../persistence/entities/site.entity.ts';
import type { Principal } from '../auth/principal.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, Deleted, Id, IdQuery } from '../schemas/common.schema.ts';
import { CreatePaymentMethodBody, PaymentMethodResponse, toPaymentMethodResponse, UpdatePaymentMethodBody } from '../schemas/payment-method.schema.ts';
import { requireSite } from '../tenancy.ts';

const DESCRIPTION = "Customers manage their own (customer_id defaults to themselves; another customer's is 404); staff name the customer.";

export const paymentMethodOperations = [
  defineOperation({
    id: 'payment-method.create',
    method: 'POST',
    path: '/customer/payment-method',
    summary: "Save a customer's payment method through the site's payments integration",
    description: `The provider must accept provider_payment_method_id (the development provider: ids starting pm_), else 422. ${DESCRIPTION}`,
    tag: 'Customers',
    access: 'payment_method.manage',
    host: 'site',
    body: CreatePaymentMethodBody,
    status: 201,
    response: DataResponse(PaymentMethodResponse),
    handler: async ({ body, site, actor, principal, services, transaction }) => ({
      data: toPaymentMethodResponse(await transaction((em) => createPaymentMethod(em, paymentContext(services, actor, principal, site), body))),
    }),
  }),
  defineOperation({
    id: 'payment-method.list',
    method: 'GET',
    path: '/customer/payment-method',
    summary: "A customer's saved payment methods, the default first",
    description: DESCRIPTION,
    tag: 'Customers',
    access: 'payment_method.manage',
    host: 'site',
    query: Type.Object({ customer_id: Type.Optional(Id), ...pageQuery }, { additionalProperties: false }),
    response: ListResponse(PaymentMethodResponse),
    handler: async ({ query, site, actor, principal, services, transaction }) => {
      const rows = await transaction((em) => listPaymentMethods(em, paymentContext(services, actor, principal, site), query.customer_id));
      return pageOfWholeList(rows.map(toPaymentMethodResponse), query);
    },
  }),
  defineOperation({
    id: 'payment-method.update',
    method: 'PUT',
    path: '/customer/payment-method',
    summary: 'Make a payment method the default (the previous default is cleared)',
    description: `is_default false on the default is refused (409 DEFAULT_REQUIRED): make another one the default instead. ${DESCRIPTION}`,
    tag: 'Customers',
    access: 'payment_method.manage',
    host: 'site',
    query: IdQuery,
    body: UpdatePaymentMethodBody,
    response: DataResponse(PaymentMethodResponse),
    handler: async ({ query, body, site, actor, principal, services, transaction }) => ({
      data: toPaymentMethodResponse(await transaction((em) => updatePaymentMethod(em, paymentContext(services, actor, principal, site), query.id, body))),
    }),
  }),
  defineOperation({
    id: 'payment-method.delete',
    method: 'DELETE',
    path: '/customer/payment-method',
    summary: 'Delete a saved payment method (deleting the default makes the newest remaining one the default)',
    description: DESCRIPTION,
    tag: 'Customers',
    access: 'payment_method.manage',
    host: 'site',
    query: IdQuery,
    response: Deleted,
    handler: async ({ query, site, actor, principal, services, transaction }) => {
      await transaction((em) => deletePaymentMethod(em, paymentContext(services, actor, principal, site), query.id));
      return { data: { id: query.id, deleted: true as const } };
    },
  }),
];

function paymentContext(services: Services, actor: AuditActor, principal: Principal | null, site: Site | null): PaymentMethodContext {
  return { actor, role: principal?.role ?? 'anonymous', siteId: requireSite(site).id, crypto: services.crypto, now: services.clock.now() };
}
