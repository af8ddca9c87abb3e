import { describe, expect, it } from 'vitest';
import { signIn } from '../support/fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

const sites = useTwoSites();

describe('tenancy and permissions', () => {
  it("refuses site A's API key on site B's host with 401", async () => {
    const response = await sites.server.client('globex').as({ apiKey: sites.acme.keys.admin }).get('/api/auth/me');
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'INVALID_CREDENTIALS' });
  });

  it("refuses site A's access token on site B's host with 401", async () => {
    const session = await signIn(sites.server.client('acme'), sites.acme.users.admin.email, sites.acme.users.admin.password);
    const response = await sites.server.client('globex').as({ accessToken: session.access_token }).get('/api/auth/me');
    expect(response.status).toBe(401);
  });

  it("answers 404 for another site's object id, exactly as for a missing one", async () => {
    const foreign = await sites.acme.as.admin.get(`/api/user?id=${sites.globex.users.driver.id}`);
    const missing = await sites.acme.as.admin.get('/api/user?id=usr_01NOTHERE0000000000000000');
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'NOT_FOUND' });
  });

  it("cannot read another site's records through the site endpoint either", async () => {
    const response = await sites.acme.as.admin.get(`/api/site?id=${sites.globex.site.id}`);
    expect(response.status).toBe(404);
    const own = await sites.acme.as.admin.get(`/api/site?id=${sites.acme.site.id}`);
    expect(own.status).toBe(200);
  });

  it('answers 403 naming the missing permission when the role lacks it', async () => {
    const response = await sites.acme.as.driver.get('/api/audit/search');
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: 'FORBIDDEN' });
    expect(String(response.body.error)).toContain('audit.read');
  });

  it('answers 400 AMBIGUOUS_CREDENTIALS when both credential headers are sent', async () => {
    const session = await signIn(sites.server.client('acme'), sites.acme.users.admin.email, sites.acme.users.admin.password);
    const response = await sites.server.client('acme').as({ apiKey: sites.acme.keys.admin, accessToken: session.access_token }).get('/api/auth/me');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'AMBIGUOUS_CREDENTIALS' });
  });

  it('answers 401 MISSING_CREDENTIALS without a credential', async () => {
    const response = await sites.server.client('acme').get('/api/auth/me');
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'MISSING_CREDENTIALS' });
  });

  it('answers 404 SITE_NOT_FOUND for an unknown site host', async () => {
    const response = await sites.server.client('nosuchsite').as({ apiKey: sites.acme.keys.admin }).get('/api/auth/me');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 'SITE_NOT_FOUND' });
  });

  it('refuses an API key on the platform host', async () => {
    const response = await sites.server.client(null).as({ apiKey: sites.acme.keys.admin }).get('/api/auth/me');
    expect(response.status).toBe(401);
  });

  it('lists only its own users in a search', async () => {
    const response = await sites.acme.as.admin.get<{ data: { email: string }[] }>('/api/user/search?page_size=100');
    expect(response.status).toBe(200);
    const emails = response.body.data.map((u) => u.email);
    expect(emails).toContain('driver@acme.example');
    expect(emails.some((e) => e.includes('globex'))).toBe(false);
  });
});
