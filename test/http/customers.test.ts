import { describe, expect, it } from 'vitest';
import { startNotificationDelivery } from '../../engine/notify/start-notification-delivery.ts';
import { createOperator, sessionClient, signIn as signInTo, type SiteFixture } from '../support/fixtures.ts';
import { MailMessageSchema } from '../../persistence/entities/mail-message.entity.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createJob, jobRequest } from '../support/job-fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';
import { waitFor } from '../support/wait-for.ts';

type One<T = Record<string, unknown>> = { data: T };
type Many<T = Record<string, unknown>> = { data: T[]; meta: { pagination: { totalItems: number } } };
type Failure = { code: string; fields?: { field: string }[] };
type Customer = {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  home_address_id: string | null;
  home_address: { id: string; city: string | null } | null;
  custom_fields: Record<string, unknown>;
  is_active: boolean;
};
type Metrics = { active_in_range: number; new_in_range: number; total_customers: number; customer_cancellation_rate: number };

const PARIS = { street_address: '10 Rue de Rivoli', city: 'Paris', point: { lat: 48.8556, lng: 2.3522 } };
const LYON = { street_address: '1 Place Bellecour', city: 'Lyon', point: { lat: 45.7578, lng: 4.832 } };

const sites = useTwoSites();

async function addCustomer(site: SiteFixture, body: Record<string, unknown>): Promise<Customer> {
  const response = await site.as.dispatcher.post<One<Customer>>('/api/customer', body);
  if (response.status !== 201) throw new Error(`customer create failed: ${response.status} ${response.text}`);
  return response.body.data;
}

async function address(site: SiteFixture, body: Record<string, unknown>): Promise<string> {
  return (await site.as.admin.post<One<{ id: string }>>('/api/address', body)).body.data.id;
}

async function metrics(site: SiteFixture, from: Date, to: Date): Promise<Metrics> {
  const response = await site.as.dispatcher.get<One<Metrics>>(`/api/customer/metrics?from=${from.toISOString()}&to=${to.toISOString()}`);
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

describe('customers', () => {
  it('creates a customer; home_address_id wins over home_address; the creation is audited', async () => {
    const lyon = await address(sites.acme, LYON);
    const customer = await addCustomer(sites.acme, { email: 'Ann@Example.com', first_name: 'Ann', last_name: 'Lee', phone: '+33612345678', home_address: PARIS, home_address_id: lyon });
    expect(customer).toMatchObject({ email: 'ann@example.com', first_name: 'Ann', home_address_id: lyon, home_address: { id: lyon, city: 'Lyon' }, is_active: true, custom_fields: {} });
    const inline = await addCustomer(sites.acme, { email: 'bob@example.com', home_address: PARIS });
    expect(inline.home_address).toMatchObject({ city: 'Paris' });
    const again = await sites.acme.as.dispatcher.post<Failure>('/api/customer', { email: 'ann@example.com' });
    expect([again.status, again.body.code]).toEqual([409, 'CUSTOMER_EXISTS']);
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=Customer&entity_id=${customer.id}`);
    expect(audit.body.data.map((r) => r.action)).toEqual(['create']);
    expect((await sites.acme.as.driver.post('/api/customer', { email: 'x@example.com' })).status).toBe(403);
  });

  it('updates only the supplied fields; home_address_id "" clears, omitted keeps, and wins over home_address', async () => {
    const lyon = await address(sites.acme, LYON);
    const customer = await addCustomer(sites.acme, { email: 'cara@example.com', first_name: 'Cara', last_name: 'Diaz', phone: '+33600000001', home_address_id: lyon });
    const renamed = await sites.acme.as.dispatcher.put<One<Customer>>('/api/customer', { id: customer.id, first_name: 'Carla' });
    expect(renamed.body.data).toMatchObject({ first_name: 'Carla', last_name: 'Diaz', phone: '+33600000001', email: 'cara@example.com', home_address_id: lyon });

    const cleared = await sites.acme.as.dispatcher.put<One<Customer>>('/api/customer', { id: customer.id, phone: null, home_address_id: '' });
    expect(cleared.body.data).toMatchObject({ first_name: 'Carla', phone: null, home_address_id: null, home_address: null });

    const both = await sites.acme.as.dispatcher.put<One<Customer>>('/api/customer', { id: customer.id, home_address: PARIS, home_address_id: lyon });
    expect(both.body.data.home_address_id).toBe(lyon);
    const inline = await sites.acme.as.dispatcher.put<One<Customer>>('/api/customer', { id: customer.id, home_address: PARIS });
    expect(inline.body.data.home_address).toMatchObject({ city: 'Paris' });
    const kept = await sites.acme.as.dispatcher.put<One<Customer>>('/api/customer', { id: customer.id, last_name: 'Diaz-Ruiz' });
    expect(kept.body.data).toMatchObject({ home_address_id: inline.body.data.home_address_id, first_name: 'Carla', last_name: 'Diaz-Ruiz' });

    const deactivated = await sites.acme.as.dispatcher.put<One<Customer>>('/api/customer', { id: customer.id, is_active: false });
    expect(deactivated.body.data).toMatchObject({ is_active: false, last_name: 'Diaz-Ruiz' });
    const search = await sites.acme.as.dispatcher.get<Many<Customer>>('/api/customer/search?q=cara');
    expect(search.body.data).toEqual([]);
    expect((await sites.acme.as.dispatcher.get<Many<Customer>>('/api/customer/search?q=cara&is_active=false')).body.data.map((c) => c.id)).toEqual([customer.id]);

    const unknown = await sites.acme.as.dispatcher.put<Failure>('/api/customer', { id: customer.id, home_address_id: 'adr_nope' });
    expect(unknown.status).toBe(404);
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=Customer&entity_id=${customer.id}`);
    expect(audit.body.data.filter((r) => r.action === 'update').length).toBe(6);
  });

  it('refuses a deactivated customer at their next request and ends their sessions: once reactivated they sign in again', async () => {
    const { customer } = sites.acme.users;
    const session = await signInTo(sites.server.client('acme'), customer.email, customer.password);
    const old = sites.server.client('acme').as({ accessToken: session.access_token });
    expect((await old.get('/api/job')).status).toBe(200);
    expect((await sites.acme.as.dispatcher.put('/api/customer', { id: customer.id, is_active: false })).status).toBe(200);
    // Within the credential cache's 30 s, so only the update's invalidation can refuse it.
    expect((await old.get('/api/job')).status).toBe(401);
    expect((await sites.acme.as.dispatcher.put('/api/customer', { id: customer.id, is_active: true })).status).toBe(200);
    // The session held before the deactivation stays ended: neither its access nor its refresh token comes back.
    expect((await old.get('/api/job')).status).toBe(401);
    expect((await sites.server.client('acme').post('/api/auth/refresh', { refresh_token: session.refresh_token })).status).toBe(401);
    const app = await sessionClient(sites.server, 'acme', customer);
    expect((await app.get('/api/job')).status).toBe(200);
    // A new password ends the sessions at once too.
    const password = 'a-new-customer-password';
    expect((await sites.acme.as.dispatcher.put('/api/customer', { id: customer.id, password })).status).toBe(200);
    expect((await app.get('/api/job')).status).toBe(401);
    customer.password = password;
  });

  it("never changes the account of a user who also belongs elsewhere (another site's admin, a platform operator)", async () => {
    const admin = sites.globex.users.admin;
    const linked = await sites.acme.as.dispatcher.post<One<Customer>>('/api/customer', { email: admin.email });
    expect(linked.status).toBe(201);
    for (const change of [{ password: 'taken-over-password' }, { email: 'thief@example.com' }, { first_name: 'Mallory' }]) {
      const refused = await sites.acme.as.dispatcher.put<Failure>('/api/customer', { id: linked.body.data.id, ...change });
      expect([refused.status, refused.body.code]).toEqual([403, 'ACCOUNT_SHARED']);
      expect((await sites.acme.as.admin.put<Failure>('/api/user', { id: linked.body.data.id, ...change })).body.code).toBe('ACCOUNT_SHARED');
    }
    // What is this site's own (the profile) still changes; the admin still signs in with their own password.
    expect((await sites.acme.as.dispatcher.put('/api/customer', { id: linked.body.data.id, is_active: false })).status).toBe(200);
    expect((await (await sessionClient(sites.server, 'globex', admin)).get('/api/auth/me')).status).toBe(200);
    // Globex had them first, and still manages its own staff: acme's link does not lock it out.
    const renamed = await sites.globex.as.admin.put<{ data: { user?: { first_name: string }; first_name?: string } }>('/api/user', { id: admin.id, first_name: 'Renamed by Globex' });
    expect(renamed.status).toBe(200);
    const operator = await createOperator(sites.server);
    const refusedOperator = await sites.acme.as.dispatcher.post<Failure>('/api/customer', { email: operator.email });
    expect([refusedOperator.status, refusedOperator.body.code]).toEqual([409, 'EMAIL_TAKEN']);
  });

  it('sets the account fields given for a known user whose account this site may change, as for a new user', async () => {
    const operator = await createOperator(sites.server, `op-known-${Date.now()}@platform.example`);
    const platform = sites.server.client(null).as({ accessToken: (await signInTo(sites.server.client(null), operator.email, operator.password)).access_token });
    const email = 'known-without-site@example.com';
    expect((await platform.post('/api/user', { email })).status).toBe(201);
    const body = { email, password: 'chosen-by-acme-staff', first_name: 'Kim', last_name: 'Ng', phone: '+33612345679', home_address: PARIS };
    const customer = await addCustomer(sites.acme, body);
    expect(customer).toMatchObject({ first_name: 'Kim', last_name: 'Ng', phone: '+33612345679', home_address: { city: 'Paris' } });
    expect((await sites.server.client('acme').post('/api/auth/signin', { email, password: body.password })).status).toBe(200);
  });

  it('refuses account fields for a known user whose account another site owns, or who is staff here, naming them, and adds no customer', async () => {
    const email = 'globex-first@example.com';
    const theirs = await addCustomer(sites.globex, { email, first_name: 'Gail' });
    const refused = await sites.acme.as.dispatcher.post<Failure>('/api/customer', { email, first_name: 'Mallory', phone: '+33600000009', password: 'taken-over-password' });
    expect([refused.status, refused.body.code, refused.body.fields?.map((f) => f.field)]).toEqual([409, 'ACCOUNT_SHARED', ['password', 'first_name', 'phone']]);
    expect((await sites.acme.as.dispatcher.get<Many<Customer>>(`/api/customer/search?q=${email}`)).body.data).toEqual([]);
    expect((await sites.globex.as.dispatcher.get<One<Customer>>(`/api/customer?id=${theirs.id}`)).body.data).toMatchObject({ first_name: 'Gail', phone: null });
    expect((await sites.server.client('acme').post('/api/auth/signin', { email, password: 'taken-over-password' })).status).toBe(401);

    const driver = sites.acme.users.driver;
    const staff = await sites.acme.as.dispatcher.post<Failure>('/api/customer', { email: driver.email, password: 'taken-over-password' });
    expect([staff.status, staff.body.code, staff.body.fields?.map((f) => f.field)]).toEqual([409, 'ACCOUNT_SHARED', ['password']]);
    expect((await sites.server.client('acme').post('/api/auth/signin', { email: driver.email, password: driver.password })).status).toBe(200);
  });

  it("a password one site's staff chose signs in there only, not on a site that takes the same person on later", async () => {
    const email = 'shared-shopper@example.com';
    await addCustomer(sites.acme, { email, password: 'chosen-by-acme-staff' });
    await addCustomer(sites.globex, { email });
    const signIn = (site: string | null, password: string) => sites.server.client(site).post<{ code?: string; data?: { type: string; profiles?: { subdomain: string }[] } }>('/api/auth/signin', { email, password });
    expect((await signIn('acme', 'chosen-by-acme-staff')).status).toBe(200);
    const onGlobex = await signIn('globex', 'chosen-by-acme-staff');
    expect([onGlobex.status, onGlobex.body.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    // The platform host offers acme's profile alone.
    const platform = await signIn(null, 'chosen-by-acme-staff');
    expect(platform.body.data?.profiles?.map((p) => p.subdomain)).toEqual(['acme']);
    // A password the person sets themself (a reset link) signs in everywhere they belong.
    // The reset mail leaves from the password-resets queue's worker, which notification delivery runs.
    const delivery = await startNotificationDelivery(sites.server.services, { pollIntervalMs: 50 });
    expect((await sites.server.client('globex').post('/api/auth/password/reset', { email })).status).toBe(202);
    const mail = await waitFor('the reset mail', () =>
      inTenantScope(sites.server.services.db.orm, { siteId: sites.globex.site.id }, async (em) => (await em.find(MailMessageSchema, { recipient: email })).at(-1)),
    );
    await delivery.close();
    const token = /dtk_[A-Za-z0-9_-]+/.exec(mail.body)![0];
    expect((await sites.server.client('globex').post('/api/auth/password/confirm', { token, new_password: 'my-own-password' })).status).toBe(200);
    expect((await signIn('globex', 'my-own-password')).status).toBe(200);
    expect((await signIn('acme', 'my-own-password')).status).toBe(200);
  });

  it('a job naming a deactivated customer by id is 409 CUSTOMER_INACTIVE, as by email: the customer exists', async () => {
    const customer = await addCustomer(sites.acme, { email: 'paused-customer@example.com' });
    expect((await sites.acme.as.dispatcher.put('/api/customer', { id: customer.id, is_active: false })).status).toBe(200);
    for (const naming of [{ customer_user_id: customer.id }, { customer_email: customer.email }]) {
      const refused = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest({ customer_email: undefined, ...naming }));
      expect([refused.status, refused.body.code]).toEqual([409, 'CUSTOMER_INACTIVE']);
    }
  });

  it("a staff-set password stays bound to its site: changed by the user in a session it opened, or chosen at /auth/site", async () => {
    const email = 'made-admin@example.com';
    const made = await sites.acme.as.admin.post<One<{ id: string }>>('/api/user', { email, password: 'set-by-acme-admin', role: 'admin' });
    expect(made.status).toBe(201);
    const self = await sessionClient(sites.server, 'acme', { email, password: 'set-by-acme-admin' });
    expect((await self.put('/api/user', { id: made.body.data.id, password: 'changed-in-that-session' })).status).toBe(200);
    await addCustomer(sites.globex, { email });
    const onGlobex = await sites.server.client('globex').post<Failure>('/api/auth/signin', { email, password: 'changed-in-that-session' });
    expect([onGlobex.status, onGlobex.body.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    // The platform host offers acme's profile only, and refuses globex's when asked for it by id.
    const pre = await sites.server.client(null).post<One<{ pre_auth_token: string; profiles: { subdomain: string }[] }>>('/api/auth/signin', { email, password: 'changed-in-that-session' });
    expect(pre.body.data.profiles.map((p) => p.subdomain)).toEqual(['acme']);
    const [globexProfile] = await inTenantScope(sites.server.services.db.orm, { siteId: null, platform: true }, (em) =>
      em.find(UserProfileSchema, { userId: made.body.data.id, siteId: sites.globex.site.id }, { filters: { site: false } }),
    );
    const chosen = await sites.server.client(null).post('/api/auth/site', { pre_auth_token: pre.body.data.pre_auth_token, profile_id: globexProfile!.id });
    expect(chosen.status).toBe(404);
  });

  it("never changes the account of another site's staff, even from the site that had them first as a customer", async () => {
    const customer = await addCustomer(sites.acme, { email: 'shopper-then-staff@example.com' });
    const operator = await createOperator(sites.server, `op-staff-${Date.now()}@platform.example`);
    const platform = sites.server.client(null).as({ accessToken: (await signInTo(sites.server.client(null), operator.email, operator.password)).access_token });
    expect((await platform.put('/api/user', { id: customer.id, role: 'dispatcher', site_id: sites.globex.site.id })).status).toBe(200);
    const refused = await sites.acme.as.dispatcher.put<Failure>('/api/customer', { id: customer.id, email: 'taken@example.com' });
    expect([refused.status, refused.body.code]).toEqual([403, 'ACCOUNT_SHARED']);
  });

  it("never lets the customer endpoints change the account of this site's own staff (a dispatcher taking over the admin)", async () => {
    const admin = { email: 'second-admin@acme.example', password: 'the-admins-own-password' };
    expect((await sites.acme.as.admin.post('/api/user', { ...admin, role: 'admin', first_name: 'Ada' })).status).toBe(201);
    const linked = await sites.acme.as.dispatcher.post<One<Customer>>('/api/customer', { email: admin.email });
    expect(linked.status).toBe(201);
    for (const change of [{ password: 'taken-over-password' }, { email: 'thief@example.com' }]) {
      const refused = await sites.acme.as.dispatcher.put<Failure & { error: string }>('/api/customer', { id: linked.body.data.id, ...change });
      expect([refused.status, refused.body.code], JSON.stringify(change)).toEqual([403, 'ACCOUNT_SHARED']);
      expect(refused.body.error).toContain('admin');
    }
    // Their own password still signs them in (to choose between the admin and the customer profile).
    type PreAuth = { data: { type: string; pre_auth_token: string; profiles: { id: string; role: string }[] } };
    const signIn = await sites.server.client('acme').post<PreAuth>('/api/auth/signin', admin);
    expect([signIn.status, signIn.body.data.type]).toEqual([200, 'pre_authentication']);
    const adminProfile = signIn.body.data.profiles.find((profile) => profile.role === 'admin')!;
    const chosen = await sites.server.client('acme').post<One<{ access_token: string }>>('/api/auth/site', { pre_auth_token: signIn.body.data.pre_auth_token, profile_id: adminProfile.id });
    const adminApp = sites.server.client('acme').as({ accessToken: chosen.body.data.access_token });
    // Switching off their customer profile ends the customer's sessions, not the admin's.
    expect((await sites.acme.as.dispatcher.put('/api/customer', { id: linked.body.data.id, is_active: false })).status).toBe(200);
    expect((await adminApp.get('/api/auth/me')).status).toBe(200);
  });

  it('lists a customer whose account the platform switched off among the inactive ones, as GET /customer reports them', async () => {
    const customer = await addCustomer(sites.acme, { email: 'olga@acme.example', first_name: 'Olga' });
    const active = await addCustomer(sites.acme, { email: 'olga.b@acme.example', first_name: 'Olga' });
    const operator = await createOperator(sites.server, 'op-olga@platform.example');
    const platform = sites.server.client(null).as({ accessToken: (await signInTo(sites.server.client(null), operator.email, operator.password)).access_token });
    expect((await platform.put('/api/user', { id: customer.id, is_active: false })).status).toBe(200);
    expect((await sites.acme.as.dispatcher.get<One<Customer>>(`/api/customer?id=${customer.id}`)).body.data.is_active).toBe(false);
    expect((await sites.acme.as.dispatcher.get<Many<Customer>>('/api/customer/search?q=olga')).body.data.map((c) => c.id)).toEqual([active.id]);
    expect((await sites.acme.as.dispatcher.get<Many<Customer>>('/api/customer/search?q=olga&is_active=false')).body.data.map((c) => c.id)).toEqual([customer.id]);
  });

  it("another site's customer is 404 to read, update and search", async () => {
    const theirs = await addCustomer(sites.globex, { email: 'gina@globex.example', first_name: 'Gina' });
    expect((await sites.acme.as.dispatcher.get(`/api/customer?id=${theirs.id}`)).status).toBe(404);
    expect((await sites.acme.as.dispatcher.put('/api/customer', { id: theirs.id, first_name: 'Hacked' })).status).toBe(404);
    expect((await sites.acme.as.dispatcher.get<Many<Customer>>('/api/customer/search?q=gina')).body.data).toEqual([]);
    expect((await sites.globex.as.dispatcher.get<One<Customer>>(`/api/customer?id=${theirs.id}`)).body.data.first_name).toBe('Gina');
    // a staff user of acme is not an acme customer either
    expect((await sites.acme.as.dispatcher.get(`/api/customer?id=${sites.acme.users.driver.id}`)).status).toBe(404);
  });

  it('validates, stores and searches customer custom fields', async () => {
    const made = await sites.acme.as.admin.post<One<{ id: string }>>('/api/customfield', { entity_type: 'customer', key: 'tier', label: 'Tier', data_type: 'select', is_required: true, options: [{ value: 'gold' }, { value: 'silver' }] });
    const missing = await sites.acme.as.dispatcher.post<Failure>('/api/customer', { email: 'dan@example.com' });
    expect([missing.status, missing.body.code, missing.body.fields?.[0]?.field]).toEqual([400, 'CUSTOM_FIELD_REQUIRED', 'custom_fields.tier']);
    const wrong = await sites.acme.as.dispatcher.post<Failure>('/api/customer', { email: 'dan@example.com', custom_fields: { tier: 'bronze' } });
    expect([wrong.status, wrong.body.code]).toEqual([400, 'INVALID_OPTION']);
    expect((await sites.acme.as.dispatcher.get<Many>('/api/customer/search?q=dan@')).body.data).toEqual([]);
    const dan = await addCustomer(sites.acme, { email: 'dan@example.com', custom_fields: { tier: 'gold' } });
    expect(dan.custom_fields).toEqual({ tier: 'gold' });
    await addCustomer(sites.acme, { email: 'eve@example.com', custom_fields: { tier: 'silver' } });
    const gold = await sites.acme.as.dispatcher.get<Many<Customer>>(`/api/customer/search?custom_fields=${encodeURIComponent('{"tier":"gold"}')}`);
    expect(gold.body.data.map((c) => c.email)).toEqual(['dan@example.com']);
    const changed = await sites.acme.as.dispatcher.put<One<Customer>>('/api/customer', { id: dan.id, custom_fields: { tier: 'silver' } });
    expect(changed.body.data.custom_fields).toEqual({ tier: 'silver' });
    await sites.acme.as.admin.put('/api/customfield', { id: made.body.data.id, is_active: false });
  });

  it('reports metrics over a time range: active, new, total and cancellation rate', async () => {
    const start = new Date();
    const before = await metrics(sites.acme, new Date(start.getTime() - 3_600_000), start);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const c1 = await addCustomer(sites.acme, { email: 'm1@example.com' });
    const c2 = await addCustomer(sites.acme, { email: 'm2@example.com' });
    const first = await createJob(sites.acme.as.dispatcher, { customer_user_id: c1.id, customer_email: undefined });
    await createJob(sites.acme.as.dispatcher, { customer_user_id: c1.id, customer_email: undefined });
    await createJob(sites.acme.as.dispatcher, { customer_user_id: c2.id, customer_email: undefined });
    const cancelled = await sites.acme.as.dispatcher.post<{ succeeded: string[] }>('/api/job/bulk/cancel', { ids: [first.id] });
    expect(cancelled.body.succeeded).toEqual([first.id]);
    const end = new Date(Date.now() + 60_000);

    expect(await metrics(sites.acme, start, end)).toMatchObject({
      active_in_range: 2,
      new_in_range: 2,
      total_customers: before.total_customers + 2,
      customer_cancellation_rate: 0.3333,
    });
    expect(await metrics(sites.acme, new Date(start.getTime() - 7_200_000), new Date(start.getTime() - 3_600_000))).toMatchObject({ active_in_range: 0, new_in_range: 0, customer_cancellation_rate: 0 });
    expect(await metrics(sites.globex, start, end)).toMatchObject({ active_in_range: 0, customer_cancellation_rate: 0 });
    const reversed = await sites.acme.as.dispatcher.get<Failure>(`/api/customer/metrics?from=${end.toISOString()}&to=${start.toISOString()}`);
    expect([reversed.status, reversed.body.code]).toEqual([400, 'INVALID_RANGE']);
  });

  it('finds or creates an inline customer once when many jobs name the same new customer at the same time', async () => {
    const email = 'rush@shop.example';
    const created = await Promise.all(Array.from({ length: 12 }, () => sites.acme.as.dispatcher.post<{ data: { customer_user_id: string } }>('/api/job', jobRequest({ customer_email: email }))));
    expect(created.map((response) => response.status)).toEqual(Array.from({ length: 12 }, () => 201));
    expect(new Set(created.map((response) => response.body.data.customer_user_id)).size).toBe(1);
  });
});
