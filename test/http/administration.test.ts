import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/http-client.ts';
import { createOperator, createSiteFixture, signIn, type SiteFixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

type One<T = Record<string, unknown>> = { data: T };

let server: TestServer;
let acme: SiteFixture;
let operator: ApiClient;

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  const credentials = await createOperator(server);
  const session = await signIn(server.client(null), credentials.email, credentials.password);
  operator = server.client(null).as({ accessToken: session.access_token });
});
afterAll(() => server.close());

describe('organizations and sites (platform operator)', () => {
  it('creates an organization and a site that then serves its own host', async () => {
    const org = await operator.post<One<{ id: string }>>('/api/organization', { name: 'Initech', email: 'ops@initech.example' });
    expect(org.status).toBe(201);
    const site = await operator.post<One<{ id: string; unit_system: string; currency: string }>>('/api/site', {
      name: 'Initech Paris', organization_id: org.body.data.id, subdomain: 'initech', timezone: 'Europe/Paris', currency: 'EUR', unit_system: 'imperial',
    });
    expect(site.status).toBe(201);
    expect(site.body.data).toMatchObject({ unit_system: 'imperial', currency: 'EUR' });
    const admin = await operator.post<One<{ id: string }>>('/api/user', { email: 'boss@initech.example', password: 'initech-boss', role: 'admin', site_id: site.body.data.id });
    expect(admin.status).toBe(201);
    const session = await signIn(server.client('initech'), 'boss@initech.example', 'initech-boss');
    const me = await server.client('initech').as({ accessToken: session.access_token }).get<One<{ site: { id: string } }>>('/api/auth/me');
    expect(me.body.data.site.id).toBe(site.body.data.id);
    const found = await operator.get<{ data: unknown[] }>(`/api/site/search?organization_id=${org.body.data.id}`);
    expect(found.body.data).toHaveLength(1);
  });

  it("refuses an organization with an address that is not a global one, or half its coordinates, naming the field, and creates none", async () => {
    type Failure = { code: string; fields?: { field: string }[] };
    const count = async () => (await operator.get<{ meta: { pagination: { totalItems: number } } }>('/api/organization/search?q=Addressed')).body.meta.pagination.totalItems;
    const acmeAddress = await acme.as.admin.post<One<{ id: string }>>('/api/address', { city: 'Paris', point: { lat: 48.85, lng: 2.35 } });
    for (const address_id of [acmeAddress.body.data.id, 'adr_00000000000000000000000000']) {
      const refused = await operator.post<Failure>('/api/organization', { name: 'Addressed', address_id });
      expect([refused.status, refused.body.fields?.[0]?.field], address_id).toEqual([404, 'address_id']);
    }
    for (const [half, missing] of [[{ latitude: 48.85 }, 'longitude'], [{ longitude: 2.35 }, 'latitude']] as const) {
      const refused = await operator.post<Failure>('/api/organization', { name: 'Addressed', ...half });
      expect([refused.status, refused.body.code, refused.body.fields?.[0]?.field]).toEqual([400, 'COORDINATES_INCOMPLETE', missing]);
    }
    expect(await count()).toBe(0);
    const global = await operator.post<One<{ id: string }>>('/api/address', { city: 'Lyon', point: { lat: 45.76, lng: 4.83 } });
    const created = await operator.post<One<{ address_id: string; latitude: number }>>('/api/organization', { name: 'Addressed', address_id: global.body.data.id, latitude: 45.76, longitude: 4.83 });
    expect([created.status, created.body.data.address_id, created.body.data.latitude]).toEqual([201, global.body.data.id, 45.76]);
  });

  it('refuses a taken or reserved subdomain and an unknown time zone', async () => {
    const base = { name: 'x', organization_id: acme.site.organizationId };
    expect((await operator.post('/api/site', { ...base, subdomain: 'acme' })).body).toMatchObject({ code: 'SUBDOMAIN_TAKEN' });
    expect((await operator.post('/api/site', { ...base, subdomain: 'www' })).body).toMatchObject({ code: 'RESERVED_SUBDOMAIN' });
    expect((await operator.post('/api/site', { ...base, subdomain: 'fresh', timezone: 'Mars/Olympus' })).body).toMatchObject({ code: 'INVALID_TIMEZONE' });
    expect((await operator.post('/api/site', { ...base, subdomain: 'Bad_Label' })).status).toBe(400);
  });

  it('accepts current IANA names the engine lists under older ones, on create and on update, and refuses a made-up one', async () => {
    const base = { name: 'Zones', organization_id: acme.site.organizationId };
    const kolkata = await operator.post<One<{ id: string; timezone: string }>>('/api/site', { ...base, subdomain: 'kolkata', timezone: 'Asia/Kolkata' });
    expect([kolkata.status, kolkata.body.data.timezone]).toEqual([201, 'Asia/Kolkata']);
    const kyiv = await operator.put<One<{ timezone: string }>>('/api/site', { id: kolkata.body.data.id, timezone: 'Europe/Kyiv' });
    expect([kyiv.status, kyiv.body.data.timezone]).toEqual([200, 'Europe/Kyiv']);
    expect((await operator.put('/api/site', { id: kolkata.body.data.id, timezone: 'Etc/UTC' })).status).toBe(200);
    // US/Pacific-New: Node 20's Intl knows it, PostgreSQL's tz database does not (its SQL would fail for the site).
    for (const timezone of ['Mars/Olympus', '+05:30', 'US/Pacific-New']) {
      const refused = await operator.put('/api/site', { id: kolkata.body.data.id, timezone });
      expect([refused.status, refused.body]).toEqual([400, expect.objectContaining({ code: 'INVALID_TIMEZONE' })]);
    }
  });

  it('lets a site admin edit their site but not its subdomain, and serves organization management on the platform host only', async () => {
    const edited = await acme.as.admin.put<One<{ name: string }>>('/api/site', { id: acme.site.id, name: 'Acme Couriers' });
    expect(edited.body.data.name).toBe('Acme Couriers');
    expect((await acme.as.admin.put('/api/site', { id: acme.site.id, subdomain: 'acme2' })).body).toMatchObject({ code: 'FORBIDDEN_FIELD' });
    expect((await acme.as.admin.post('/api/organization', { name: 'nope' })).body).toMatchObject({ code: 'PLATFORM_HOST_REQUIRED' });
    expect((await acme.as.dispatcher.put('/api/site', { id: acme.site.id, name: 'x' })).status).toBe(403);
  });

  it('switches a deactivated site off at once', async () => {
    const org = await operator.post<One<{ id: string }>>('/api/organization', { name: 'Shortlived' });
    const site = await operator.post<One<{ id: string }>>('/api/site', { name: 's', organization_id: org.body.data.id, subdomain: 'shortlived' });
    const fixtureKey = await createSiteFixture(server, 'other');
    expect((await fixtureKey.as.admin.get('/api/auth/me')).status).toBe(200);
    await operator.put('/api/site', { id: site.body.data.id, is_active: false });
    expect((await server.client('shortlived').post('/api/auth/signin', { email: 'a@b.c', password: 'x' })).body).toMatchObject({ code: 'SITE_INACTIVE' });
  });

  it('switches off every site of a deactivated organization at once and refuses a new one under it, until it is reactivated', async () => {
    const org = await operator.post<One<{ id: string }>>('/api/organization', { name: 'Dormant' });
    const orgId = org.body.data.id;
    const site = await operator.post<One<{ id: string }>>('/api/site', { name: 'Dormant', organization_id: orgId, subdomain: 'dormant' });
    expect((await operator.post('/api/user', { email: 'boss@dormant.example', password: 'dormant-boss', role: 'admin', site_id: site.body.data.id })).status).toBe(201);
    const session = await signIn(server.client('dormant'), 'boss@dormant.example', 'dormant-boss');
    const boss = server.client('dormant').as({ accessToken: session.access_token });
    expect((await boss.get('/api/auth/me')).status).toBe(200);

    const switchedOff = await operator.put<One<{ is_active: boolean }>>('/api/organization', { id: orgId, is_active: false });
    expect([switchedOff.status, switchedOff.body.data.is_active]).toEqual([200, false]);
    // Within the site directory's 30 s cache, so only the update's invalidation can refuse it.
    const refused = await boss.get('/api/auth/me');
    expect([refused.status, refused.body]).toEqual([403, expect.objectContaining({ code: 'SITE_INACTIVE' })]);
    expect((await server.client('dormant').post('/api/auth/signin', { email: 'boss@dormant.example', password: 'dormant-boss' })).body).toMatchObject({ code: 'SITE_INACTIVE' });
    const added = await operator.post('/api/site', { name: 'Dormant 2', organization_id: orgId, subdomain: 'dormant2' });
    expect([added.status, added.body]).toEqual([409, expect.objectContaining({ code: 'ORGANIZATION_INACTIVE' })]);
    // The platform host, and the other organizations' sites, carry on.
    expect((await operator.get<One<{ is_active: boolean }>>(`/api/organization?id=${orgId}`)).body.data.is_active).toBe(false);
    expect((await acme.as.admin.get('/api/auth/me')).status).toBe(200);

    expect((await operator.put('/api/organization', { id: orgId, is_active: true })).status).toBe(200);
    expect((await boss.get('/api/auth/me')).status).toBe(200);
    expect((await operator.post('/api/site', { name: 'Dormant 2', organization_id: orgId, subdomain: 'dormant2' })).status).toBe(201);
  });
});

describe("a site's address", () => {
  it("is one of its own or a global one, never another site's (404, nothing changed)", async () => {
    const other = await createSiteFixture(server, 'addressed');
    const body = { street_address: '1 Rue de la Paix', city: 'Paris', point: { lat: 48.869, lng: 2.331 } };
    const theirs = await acme.as.admin.post<One<{ id: string }>>('/api/address', body);
    expect(theirs.status).toBe(201);
    const mine = await other.as.admin.post<One<{ id: string }>>('/api/address', body);
    for (const as of [other.as.admin, operator]) {
      const refused = await as.put<{ code: string; fields: { field: string }[] }>('/api/site', { id: other.site.id, address_id: theirs.body.data.id });
      expect([refused.status, refused.body.fields[0]!.field]).toEqual([404, 'address_id']);
    }
    expect((await other.as.admin.put('/api/site', { id: other.site.id, address_id: mine.body.data.id })).status).toBe(200);
  });
});

describe('API keys', () => {
  it('acts with its role and stops working the moment it is revoked', async () => {
    const created = await acme.as.admin.post<One<{ id: string; api_key: string }>>('/api/application', { name: 'integration', role: 'dispatcher' });
    const key = server.client('acme').as({ apiKey: created.body.data.api_key });
    const me = await key.get<One<{ active_profile: { role: string }; user: { is_service_account: boolean } }>>('/api/auth/me');
    expect(me.body.data.active_profile.role).toBe('dispatcher');
    expect(me.body.data.user.is_service_account).toBe(true);
    expect((await key.get('/api/audit/search')).status).toBe(403);
    await acme.as.admin.put('/api/application', { id: created.body.data.id, role: 'admin' });
    expect((await key.get('/api/audit/search')).status).toBe(200);
    await acme.as.admin.put('/api/application', { id: created.body.data.id, is_active: false });
    expect((await key.get('/api/auth/me')).status).toBe(401);
  });

  it("refuses a profile change of a key's service account, which would not change the key", async () => {
    const created = await acme.as.admin.post<One<{ id: string; api_key: string }>>('/api/application', { name: 'agent', role: 'admin' });
    const key = server.client('acme').as({ apiKey: created.body.data.api_key });
    const me = await key.get<One<{ user: { id: string } }>>('/api/auth/me');
    const serviceUserId = me.body.data.user.id;
    for (const change of [{ is_active: false }, { role: 'customer' }]) {
      const refused = await acme.as.admin.put('/api/user', { id: serviceUserId, ...change });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'SERVICE_ACCOUNT', fields: [{ field: Object.keys(change)[0] }] });
    }
    // Nothing changed: the key still acts as an admin.
    expect((await key.get('/api/audit/search')).status).toBe(200);
  });
});

describe('users on a site', () => {
  it("deactivating a user's profile on a site ends their sessions there", async () => {
    const session = await signIn(server.client('acme'), acme.users.customer.email, acme.users.customer.password);
    const client = server.client('acme').as({ accessToken: session.access_token });
    expect((await client.get('/api/auth/me')).status).toBe(200);
    await acme.as.admin.put('/api/user', { id: acme.users.customer.id, is_active: false });
    expect((await client.get('/api/auth/me')).status).toBe(401);
    expect((await server.client('acme').post('/api/auth/signin', { email: acme.users.customer.email, password: acme.users.customer.password })).status).toBe(401);
  });

  it('answers 404 naming the field for an organization or site the platform names that does not exist, writing nothing', async () => {
    const org = await operator.post<{ code: string; fields: { field: string }[] }>('/api/user', { email: 'lost@example.com', organization_id: 'org_nope' });
    expect([org.status, org.body.code, org.body.fields[0]!.field]).toEqual([404, 'NOT_FOUND', 'organization_id']);
    const created = await operator.post<One<{ id: string }>>('/api/user', { email: 'found@example.com' });
    expect(created.status).toBe(201);
    const site = await operator.put<{ fields: { field: string }[] }>('/api/user', { id: created.body.data.id, role: 'driver', site_id: 'site_nope' });
    expect([site.status, site.body.fields[0]!.field]).toEqual([404, 'site_id']);
    // An inline home address on the platform host would be global (every site's staff could find it).
    const home = await operator.put<{ code: string }>('/api/user', { id: created.body.data.id, home_address: { street_address: '12 Rue X', point: { lat: 48.85, lng: 2.35 } } });
    expect([home.status, home.body.code]).toEqual([400, 'HOME_ADDRESS_ID_REQUIRED']);
    expect((await operator.get<{ data: unknown[] }>('/api/user/search?q=lost@example.com')).body.data).toEqual([]);
  });

  it('refuses an email that is taken', async () => {
    const response = await acme.as.admin.post('/api/user', { email: acme.users.driver.email.toUpperCase(), role: 'driver' });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ code: 'EMAIL_TAKEN' });
  });
});
