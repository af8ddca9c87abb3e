import { beforeAll, describe, expect, it } from 'vitest';
import { PaymentMethodSchema } from '../../persistence/entities/payment-method.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { ApiClient } from '../support/http-client.ts';
import { signIn } from '../support/fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

type Method = { id: string; customer_id: string; provider: string; brand: string; last4: string; exp_month: number; exp_year: number; is_default: boolean };
type Created = { data: Method; code?: string; fields?: { field: string }[] };

const sites = useTwoSites();
let customer: ApiClient;
let otherCustomer: { id: string; client: ApiClient };

beforeAll(async () => {
  const session = await signIn(sites.server.client('acme'), sites.acme.users.customer.email, sites.acme.users.customer.password);
  customer = sites.server.client('acme').as({ accessToken: session.access_token });
  const other = await sites.acme.as.admin.post<{ data: { id: string } }>('/api/user', { email: 'other@acme.example', role: 'customer', password: 'other-password' });
  const otherSession = await signIn(sites.server.client('acme'), 'other@acme.example', 'other-password');
  otherCustomer = { id: other.body.data.id, client: sites.server.client('acme').as({ accessToken: otherSession.access_token }) };
});

const defaults = (customerId: string) =>
  inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) => em.find(PaymentMethodSchema, { customerUserId: customerId, isDefault: true }));

describe('saved payment methods', () => {
  it("are created through the site's payments provider, which describes them; the first becomes the default", async () => {
    const first = await customer.post<Created>('/api/customer/payment-method', { provider_payment_method_id: 'pm_card_visa_4242' });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ customer_id: sites.acme.users.customer.id, provider: 'development_payments', brand: 'visa', last4: '4242', is_default: true });
    expect(first.body.data.exp_month).toBeGreaterThanOrEqual(1);
    const second = await customer.post<Created>('/api/customer/payment-method', { provider_payment_method_id: 'pm_card_mastercard_5555' });
    expect(second.body.data).toMatchObject({ brand: 'mastercard', last4: '5555', is_default: false });
    const list = await customer.get<{ data: Method[]; meta: { total: number } }>('/api/customer/payment-method');
    expect(list.body.data.map((m) => m.last4)).toEqual(['4242', '5555']);
    expect(list.body.meta).toEqual({ total: 2, page: 1, per_page: 20 });
    // Paged as every list: page and per_page (or page_size).
    const second_page = await customer.get<{ data: Method[]; meta: unknown }>('/api/customer/payment-method?page=2&per_page=1');
    expect([second_page.status, second_page.body.data.map((m) => m.last4), second_page.body.meta]).toEqual([200, ['5555'], { total: 2, page: 2, per_page: 1 }]);
  });

  it('refuses an id the provider does not accept (422) and a duplicate (409), saving nothing', async () => {
    const refused = await customer.post<Created>('/api/customer/payment-method', { provider_payment_method_id: 'tok_visa' });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('PAYMENT_METHOD_REJECTED');
    const duplicate = await customer.post<Created>('/api/customer/payment-method', { provider_payment_method_id: 'pm_card_visa_4242' });
    expect(duplicate.status).toBe(409);
    expect((await customer.get<{ data: Method[] }>('/api/customer/payment-method')).body.data).toHaveLength(2);
  });

  it('setting a new default clears the old one', async () => {
    const [visa, mastercard] = (await customer.get<{ data: Method[] }>('/api/customer/payment-method')).body.data;
    const updated = await customer.put<Created>(`/api/customer/payment-method?id=${mastercard!.id}`, { is_default: true });
    expect(updated.body.data.is_default).toBe(true);
    const list = await customer.get<{ data: Method[] }>('/api/customer/payment-method');
    expect(list.body.data.map((m) => [m.id, m.is_default])).toEqual([[mastercard!.id, true], [visa!.id, false]]);
    const created = await customer.post<Created>('/api/customer/payment-method', { provider_payment_method_id: 'pm_card_amex_0005', is_default: true });
    expect(created.body.data.is_default).toBe(true);
    expect((await defaults(sites.acme.users.customer.id)).map((m) => m.id)).toEqual([created.body.data.id]);
    const unset = await customer.put<Created>(`/api/customer/payment-method?id=${created.body.data.id}`, { is_default: false });
    expect(unset.status).toBe(409);
    expect(unset.body.code).toBe('DEFAULT_REQUIRED');
  });

  it('10 parallel set-default calls leave exactly one default', async () => {
    const methods = (await customer.get<{ data: Method[] }>('/api/customer/payment-method')).body.data;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => customer.put<Created>(`/api/customer/payment-method?id=${methods[i % methods.length]!.id}`, { is_default: true })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(await defaults(sites.acme.users.customer.id)).toHaveLength(1);
    const list = await customer.get<{ data: Method[] }>('/api/customer/payment-method');
    expect(list.body.data.filter((m) => m.is_default)).toHaveLength(1);
  });

  it('10 parallel creates with is_default leave exactly one default', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => otherCustomer.client.post<Created>('/api/customer/payment-method', { provider_payment_method_id: `pm_parallel_${i}`, is_default: true })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(await defaults(otherCustomer.id)).toHaveLength(1);
  });

  it('deleting the default makes the newest remaining method the default', async () => {
    const before = (await customer.get<{ data: Method[] }>('/api/customer/payment-method')).body.data;
    const current = before.find((m) => m.is_default)!;
    const deleted = await customer.send<{ data: { deleted: boolean } }>('DELETE', `/api/customer/payment-method?id=${current.id}`);
    expect(deleted.status).toBe(200);
    const after = (await customer.get<{ data: Method[] }>('/api/customer/payment-method')).body.data;
    expect(after).toHaveLength(before.length - 1);
    expect(after.filter((m) => m.is_default)).toHaveLength(1);
    const audit = await sites.acme.as.admin.get<{ data: { action: string }[] }>(`/api/audit/search?entity_type=PaymentMethod&entity_id=${current.id}`);
    expect(audit.body.data.map((r) => r.action)).toContain('delete');
  });

  it('emit payment_method:create, update and delete events (webhooks may subscribe to them), in each change\'s transaction', async () => {
    const subscribed = await sites.acme.as.admin.post('/api/webhook', { url: 'https://93.184.216.34/hooks/payments', events: ['payment_method:*'], secret_key: 'a3f1c9e07b5d2846a3f1c9e07b5d2846' });
    expect(subscribed.status).toBe(201);
    const displaced = (await customer.get<{ data: Method[] }>('/api/customer/payment-method')).body.data.find((m) => m.is_default)!;
    const outbox = <T extends object>(sql: string, params: unknown[]) => inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) => em.execute<T[]>(sql, params));
    const [{ last }] = (await outbox<{ last: string }>('select coalesce(max(seq), 0) as last from outbox', [])) as [{ last: string }];
    const made = (await customer.post<Created>('/api/customer/payment-method', { provider_payment_method_id: 'pm_card_amex_0005', is_default: true })).body.data;
    expect((await customer.send('DELETE', `/api/customer/payment-method?id=${made.id}`)).status).toBe(200);
    const events = await outbox<{ event: string; data: { id: string; is_default: boolean } }>(
      "select event, payload->'data' as data from outbox where seq > ? and entity_id in (?, ?) order by seq",
      [last, made.id, displaced.id],
    );
    // The new default displaces the old one; deleting it hands the default back.
    expect(events.map((e) => [e.event, e.data.id, e.data.is_default])).toEqual([
      ['payment_method:update', displaced.id, false],
      ['payment_method:create', made.id, true],
      ['payment_method:delete', made.id, true],
      ['payment_method:update', displaced.id, true],
    ]);
  });

  it("are a customer's own: another customer's are 404, and a customer cannot name someone else", async () => {
    const mine = (await customer.get<{ data: Method[] }>('/api/customer/payment-method')).body.data[0]!;
    expect((await otherCustomer.client.put(`/api/customer/payment-method?id=${mine.id}`, { is_default: true })).status).toBe(404);
    expect((await otherCustomer.client.send('DELETE', `/api/customer/payment-method?id=${mine.id}`)).status).toBe(404);
    expect((await otherCustomer.client.get(`/api/customer/payment-method?customer_id=${sites.acme.users.customer.id}`)).status).toBe(404);
    expect((await sites.acme.as.driver.get('/api/customer/payment-method')).status).toBe(403);
  });

  it('are managed by staff for a named customer of the site; other sites see nothing', async () => {
    const missing = await sites.acme.as.dispatcher.get<Created>('/api/customer/payment-method');
    expect(missing.status).toBe(400);
    expect(missing.body.fields).toEqual([expect.objectContaining({ field: 'customer_id' })]);
    const list = await sites.acme.as.dispatcher.get<{ data: Method[] }>(`/api/customer/payment-method?customer_id=${sites.acme.users.customer.id}`);
    expect(list.body.data.length).toBeGreaterThan(0);
    const created = await sites.acme.as.admin.post<Created>('/api/customer/payment-method', { customer_id: sites.acme.users.customer.id, provider_payment_method_id: 'pm_by_staff' });
    expect(created.status).toBe(201);
    expect((await sites.acme.as.admin.post('/api/customer/payment-method', { customer_id: sites.acme.users.driver.id, provider_payment_method_id: 'pm_driver' })).status).toBe(404);
    expect((await sites.globex.as.admin.get(`/api/customer/payment-method?customer_id=${sites.acme.users.customer.id}`)).status).toBe(404);
    expect((await sites.globex.as.admin.send('DELETE', `/api/customer/payment-method?id=${created.body.data.id}`)).status).toBe(404);
    const audit = await sites.acme.as.admin.get<{ data: { action: string; user_id: string }[] }>(`/api/audit/search?entity_type=PaymentMethod&entity_id=${created.body.data.id}`);
    expect(audit.body.data).toHaveLength(1);
  });

  it("refuse saving when the site's payments integration has no adapter in this build", async () => {
    await sites.globex.as.admin.put('/api/integration?integration_key=stripe', { config: { client_id: 'ca_x', secret_key: 'sk_test_x' }, is_active: true });
    const session = await signIn(sites.server.client('globex'), sites.globex.users.customer.email, sites.globex.users.customer.password);
    const response = await sites.server.client('globex').as({ accessToken: session.access_token }).post<Created>('/api/customer/payment-method', { provider_payment_method_id: 'pm_card_visa' });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('PAYMENTS_PROVIDER_UNAVAILABLE');
  });
});
