import { describe, expect, it } from 'vitest';
import { findOrCreateCustomer, type CustomerInput } from '../../engine/catalog/customer.service.ts';
import { assertOptions } from '../../engine/catalog/option.service.ts';
import { assertServiceType } from '../../engine/catalog/service-type.service.ts';
import { UserProfileSchema } from '../../persistence/entities/user-profile.entity.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { type SiteFixture } from '../support/fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T = Record<string, unknown>> = { data: T };
type Many<T = Record<string, unknown>> = { data: T[]; meta: { pagination: { totalItems: number } } };
type ServiceType = { id: string; name: string; description: string | null; code: string | null; base_price_cents: number | null; currency: string | null; vehicle_types: string[] | null; is_active: boolean };

const sites = useTwoSites();

describe('service types', () => {
  it('creates, reads and updates a service type with three-state fields, and audits each change', async () => {
    const created = await sites.acme.as.admin.post<One<ServiceType>>('/api/servicetype', {
      name: 'Express delivery', description: 'Within two hours', code: 'EXP', default_duration_seconds: 900, base_price_cents: 1250, vehicle_types: ['van', 'bike'],
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: expect.stringMatching(/^svt_/), site_id: sites.acme.site.id, currency: sites.acme.site.currency, is_active: true });
    const id = created.body.data.id;
    expect((await sites.acme.as.driver.get<One<ServiceType>>(`/api/servicetype?id=${id}`)).body.data.name).toBe('Express delivery');

    const updated = await sites.acme.as.dispatcher.put<One<ServiceType>>('/api/servicetype', { id, name: 'Express', description: null, vehicle_types: null });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'Express', description: null, vehicle_types: null, code: 'EXP', base_price_cents: 1250 });

    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=ServiceType&entity_id=${id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update']);
  });

  it('searches by name or code and by activity, within the site only', async () => {
    const made = await sites.acme.as.admin.post<One<ServiceType>>('/api/servicetype', { name: 'Furniture assembly', code: 'ASM' });
    await sites.acme.as.admin.put('/api/servicetype', { id: made.body.data.id, is_active: false });
    await sites.globex.as.admin.post('/api/servicetype', { name: 'Globex assembly' });
    const byCode = await sites.acme.as.customer.get<Many<ServiceType>>('/api/servicetype/search?q=asm');
    expect(byCode.body.data.map((s) => s.name)).toEqual(['Furniture assembly']);
    const active = await sites.acme.as.admin.get<Many<ServiceType>>('/api/servicetype/search?is_active=true&sort=-name');
    expect(active.body.data.every((s) => s.is_active)).toBe(true);
    expect(active.body.data.map((s) => s.name)).not.toContain('Furniture assembly');
  });

  it("answers 404 for another site's service type, on read and on update", async () => {
    const foreign = await sites.globex.as.admin.post<One<ServiceType>>('/api/servicetype', { name: 'Globex only' });
    expect((await sites.acme.as.admin.get(`/api/servicetype?id=${foreign.body.data.id}`)).status).toBe(404);
    expect((await sites.acme.as.admin.put('/api/servicetype', { id: foreign.body.data.id, name: 'Stolen' })).status).toBe(404);
    expect((await sites.globex.as.admin.get<One<ServiceType>>(`/api/servicetype?id=${foreign.body.data.id}`)).body.data.name).toBe('Globex only');
  });

  it('lets only admins and dispatchers change the catalog, and refuses unknown fields and taken codes', async () => {
    expect((await sites.acme.as.driver.post('/api/servicetype', { name: 'Nope' })).status).toBe(403);
    expect((await sites.acme.as.customer.post('/api/servicetype', { name: 'Nope' })).status).toBe(403);
    const unknown = await sites.acme.as.admin.post('/api/servicetype', { name: 'X', colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await sites.acme.as.admin.post('/api/servicetype', { name: 'X', base_price_cents: 9.5 })).status).toBe(400);
    await sites.acme.as.admin.post('/api/servicetype', { name: 'Same day', code: 'SD' });
    expect((await sites.acme.as.admin.post('/api/servicetype', { name: 'Same day 2', code: 'SD' })).body).toMatchObject({ code: 'SERVICE_TYPE_CODE_TAKEN' });
    expect((await sites.globex.as.admin.post('/api/servicetype', { name: 'Globex same day', code: 'SD' })).status).toBe(201);
  });

  it('gives the job service a check that names the field of a missing or inactive service type', async () => {
    const live = await sites.acme.as.admin.post<One<ServiceType>>('/api/servicetype', { name: 'Live' });
    const retired = await sites.acme.as.admin.post<One<ServiceType>>('/api/servicetype', { name: 'Retired' });
    await sites.acme.as.admin.put('/api/servicetype', { id: retired.body.data.id, is_active: false });
    const foreign = await sites.globex.as.admin.post<One<ServiceType>>('/api/servicetype', { name: 'Foreign' });
    const check = (id: string) => inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) => assertServiceType(em, id));
    expect((await check(live.body.data.id)).name).toBe('Live');
    await expect(check(foreign.body.data.id)).rejects.toMatchObject({ status: 404, field: 'service_type_id' });
    await expect(check(retired.body.data.id)).rejects.toMatchObject({ status: 422, code: 'SERVICE_TYPE_INACTIVE', field: 'service_type_id' });
  });
});

describe('options', () => {
  type Option = { id: string; name: string; description: string | null; price_cents: number | null; currency: string | null; is_active: boolean };

  it('creates, reads, updates (null clears) and searches options', async () => {
    const created = await sites.acme.as.dispatcher.post<One<Option>>('/api/option', { name: 'Fragile', description: 'Handle with care', price_cents: 300, currency: 'EUR' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: expect.stringMatching(/^opt_/), price_cents: 300, currency: 'EUR', is_active: true });
    const id = created.body.data.id;
    const updated = await sites.acme.as.admin.put<One<Option>>('/api/option', { id, description: null, is_active: false });
    expect(updated.body.data).toMatchObject({ name: 'Fragile', description: null, price_cents: 300, currency: 'EUR', is_active: false });
    expect((await sites.acme.as.customer.get<One<Option>>(`/api/option?id=${id}`)).body.data.is_active).toBe(false);
    await sites.acme.as.admin.post('/api/option', { name: 'Signature required' });
    const found = await sites.acme.as.driver.get<Many<Option>>('/api/option/search?q=signature');
    expect(found.body.data.map((o) => o.name)).toEqual(['Signature required']);
    expect(found.body.meta.pagination.totalItems).toBe(1);
  });

  it("keeps options to their site, to catalog managers, and to known fields", async () => {
    const foreign = await sites.globex.as.admin.post<One<Option>>('/api/option', { name: 'Globex extra' });
    expect((await sites.acme.as.admin.get(`/api/option?id=${foreign.body.data.id}`)).status).toBe(404);
    expect((await sites.acme.as.admin.put('/api/option', { id: foreign.body.data.id, name: 'x' })).status).toBe(404);
    expect((await sites.acme.as.driver.post('/api/option', { name: 'Nope' })).status).toBe(403);
    expect((await sites.acme.as.admin.post('/api/option', { name: 'X', priority: 1 })).status).toBe(400);
    expect((await sites.acme.as.admin.put('/api/option', { id: foreign.body.data.id, name: null })).status).toBe(400);
  });

  it('gives the job service a check that names the field and the ids of missing or inactive options', async () => {
    const a = await sites.acme.as.admin.post<One<Option>>('/api/option', { name: 'Stairs' });
    const b = await sites.acme.as.admin.post<One<Option>>('/api/option', { name: 'Two-person lift' });
    const off = await sites.acme.as.admin.post<One<Option>>('/api/option', { name: 'Old extra' });
    await sites.acme.as.admin.put('/api/option', { id: off.body.data.id, is_active: false });
    const foreign = await sites.globex.as.admin.post<One<Option>>('/api/option', { name: 'Foreign extra' });
    const check = (ids: string[]) => inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) => assertOptions(em, ids));
    const ok = await check([b.body.data.id, a.body.data.id, b.body.data.id]);
    expect(ok.map((o) => o.name)).toEqual(['Two-person lift', 'Stairs']);
    expect(await check([])).toEqual([]);
    await expect(check([a.body.data.id, foreign.body.data.id])).rejects.toMatchObject({
      status: 404, field: 'option_ids', message: expect.stringContaining(foreign.body.data.id),
    });
    await expect(check([off.body.data.id])).rejects.toMatchObject({ status: 422, code: 'OPTION_INACTIVE', field: 'option_ids' });
  });
});

describe('customers', () => {
  type Customer = { id: string; email: string; first_name: string | null };

  it("searches the site's customers only, without API keys' service accounts, for admins and dispatchers", async () => {
    const all = await sites.acme.as.dispatcher.get<Many<Customer>>('/api/customer/search?page_size=100');
    expect(all.status).toBe(200);
    expect(all.body.data.map((c) => c.email)).toContain(sites.acme.users.customer.email);
    expect(all.body.data.map((c) => c.email)).not.toContain(sites.globex.users.customer.email);
    expect(all.body.data.every((c) => !c.email.endsWith('@service-account.invalid'))).toBe(true);
    const byName = await sites.acme.as.admin.get<Many<Customer>>(`/api/customer/search?q=${encodeURIComponent(sites.acme.users.customer.email.toUpperCase())}`);
    expect(byName.body.data.map((c) => c.id)).toEqual([sites.acme.users.customer.id]);
    expect((await sites.acme.as.driver.get('/api/customer/search')).status).toBe(403);
    expect((await sites.acme.as.customer.get('/api/customer/search')).status).toBe(403);
  });

  it('finds a customer by id, and refuses an id that is not a customer of this site', async () => {
    expect((await resolve(sites.acme, { customer_user_id: sites.acme.users.customer.id })).email).toBe(sites.acme.users.customer.email);
    await expect(resolve(sites.acme, { customer_user_id: sites.globex.users.customer.id })).rejects.toMatchObject({ status: 404, field: 'customer_user_id' });
    await expect(resolve(sites.acme, { customer_user_id: sites.acme.users.driver.id })).rejects.toMatchObject({ status: 404 });
    await expect(resolve(sites.acme, { customer_user_id: 'usr_missing' })).rejects.toMatchObject({ status: 404 });
  });

  it('reuses an existing customer by email without creating a second user', async () => {
    const count = () => inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, (em) => em.count(UserSchema, {}));
    const before = await count();
    const user = await resolve(sites.acme, { email: sites.acme.users.customer.email.toUpperCase(), first_name: 'Renamed' });
    expect(user.id).toBe(sites.acme.users.customer.id);
    expect(user.firstName).toBe('customer');
    expect(await count()).toBe(before);
  });

  it("gives another site's user a customer profile here instead of a second account", async () => {
    const user = await resolve(sites.acme, { email: sites.globex.users.driver.email });
    expect(user.id).toBe(sites.globex.users.driver.id);
    expect(await customerProfiles(user.id, sites.acme.site.id)).toBe(1);
    expect((await resolve(sites.acme, { email: sites.globex.users.driver.email })).id).toBe(user.id);
    expect(await customerProfiles(user.id, sites.acme.site.id)).toBe(1);
    const search = await sites.acme.as.admin.get<Many<Customer>>(`/api/customer/search?q=${encodeURIComponent(sites.globex.users.driver.email)}`);
    expect(search.body.data.map((c) => c.id)).toEqual([user.id]);
  });

  it('creates a user with a customer profile for a new email', async () => {
    const user = await resolve(sites.acme, { email: 'New.Person@example.com', first_name: 'New', last_name: 'Person', phone: '+33612345678', phone_country: 'FR' });
    expect(user).toMatchObject({ email: 'new.person@example.com', firstName: 'New', phone: '+33612345678' });
    expect(await customerProfiles(user.id, sites.acme.site.id)).toBe(1);
    const search = await sites.acme.as.admin.get<Many<Customer>>('/api/customer/search?q=33612345678');
    expect(search.body.data.map((c) => c.id)).toEqual([user.id]);
    expect((await resolve(sites.acme, { customer_user_id: user.id })).id).toBe(user.id);
  });

  it("refuses a deactivated customer and an API key's service account", async () => {
    const user = await resolve(sites.acme, { email: 'leaving@example.com' });
    expect((await sites.acme.as.admin.put('/api/user', { id: user.id, is_active: false })).status).toBe(200);
    await expect(resolve(sites.acme, { email: 'leaving@example.com' })).rejects.toMatchObject({ status: 409, code: 'CUSTOMER_INACTIVE', field: 'customer_email' });
    await expect(resolve(sites.acme, { customer_user_id: user.id })).rejects.toMatchObject({ status: 409, code: 'CUSTOMER_INACTIVE', field: 'customer_user_id' });
    const me = await sites.acme.as.customer.get<One<{ user: { id: string; email: string } }>>('/api/auth/me');
    await expect(resolve(sites.acme, { email: me.body.data.user.email })).rejects.toMatchObject({ status: 400, code: 'INVALID_EMAIL' });
    await expect(resolve(sites.acme, { customer_user_id: me.body.data.user.id })).rejects.toMatchObject({ status: 404 });
  });

  it('requires a customer id or an email', async () => {
    await expect(resolve(sites.acme, { first_name: 'Nobody' })).rejects.toMatchObject({ status: 400, code: 'CUSTOMER_REQUIRED', field: 'customer_user_id' });
  });
});

const ACTOR = { userId: null, applicationId: null, requestId: 'catalog-test' };

/** findOrCreateCustomer as the job service will call it: inside a transaction bound to the site. */
function resolve(site: SiteFixture, input: CustomerInput) {
  return inTenantScope(sites.server.services.db.orm, { siteId: site.site.id }, (em) => findOrCreateCustomer(em, ACTOR, site.site.id, input));
}

function customerProfiles(userId: string, siteId: string) {
  return inTenantScope(sites.server.services.db.orm, { siteId }, (em) => em.count(UserProfileSchema, { userId, siteId, role: 'customer' }));
}
