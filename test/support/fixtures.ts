import { createApplication } from '../../engine/admin/application.service.ts';
import { createOrganization } from '../../engine/admin/organization.service.ts';
import { createSite } from '../../engine/admin/site.service.ts';
import { createUser } from '../../engine/admin/user.service.ts';
import { UserSchema } from '../../persistence/entities/user.entity.ts';
import type { Site } from '../../persistence/entities/site.entity.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { ApiClient } from './http-client.ts';
import type { TestServer } from './test-server.ts';

export const ROLES = ['admin', 'dispatcher', 'driver', 'customer'] as const;
export type SiteRole = (typeof ROLES)[number];

export type SiteFixture = {
  site: Site;
  users: Record<SiteRole, { id: string; email: string; password: string }>;
  /** One API key per role. */
  keys: Record<SiteRole, string>;
  /** Clients on the site's host, authenticated with each role's API key. */
  as: Record<SiteRole, ApiClient>;
};

const ACTOR = { userId: null, applicationId: null, requestId: 'fixture' };

/** A site with an organization, one user (password `password-<role>`) and one API key per role. */
export async function createSiteFixture(server: TestServer, subdomain: string): Promise<SiteFixture> {
  const orm = server.services.db.orm;
  const site = await inTenantScope(orm, { siteId: null, platform: true }, async (em) => {
    const organization = await createOrganization(em, ACTOR, { name: `${subdomain} org` });
    return createSite(em, ACTOR, { name: subdomain, organization_id: organization.id, subdomain });
  });
  const users = {} as SiteFixture['users'];
  const keys = {} as SiteFixture['keys'];
  for (const role of ROLES) {
    const email = `${role}@${subdomain}.example`;
    const password = `password-${role}`;
    const view = await inTenantScope(orm, { siteId: site.id }, (em) =>
      createUser(em, ACTOR, { siteId: site.id }, { email, password, role, first_name: role, last_name: subdomain }),
    );
    users[role] = { id: view.user.id, email, password };
    const { apiKey } = await inTenantScope(orm, { siteId: site.id }, (em) => createApplication(em, ACTOR, site.id, { name: `${role} key`, role }));
    keys[role] = apiKey;
  }
  const client = server.client(subdomain);
  const as = Object.fromEntries(ROLES.map((role) => [role, client.as({ apiKey: keys[role] })])) as SiteFixture['as'];
  return { site, users, keys, as };
}

/** A platform operator (signs in on the bare host). */
export async function createOperator(server: TestServer, email = 'operator@platform.example', password = 'operator-password') {
  const orm = server.services.db.orm;
  const id = await inTenantScope(orm, { siteId: null, platform: true }, async (em) => {
    const view = await createUser(em, ACTOR, { siteId: null }, { email, password });
    const user = await em.findOneOrFail(UserSchema, { id: view.user.id });
    user.isPlatformOperator = true;
    await em.flush();
    return user.id;
  });
  return { id, email, password };
}

export type SessionBody = { access_token: string; refresh_token: string; type: string };

/** Signs in and returns the session (fails the test on anything else). */
export async function signIn(client: ApiClient, email: string, password: string): Promise<SessionBody> {
  const response = await client.post<{ data: SessionBody }>('/api/auth/signin', { email, password });
  if (response.status !== 200 || response.body.data.type !== 'session') {
    throw new Error(`sign-in of ${email} failed: ${response.status} ${response.text}`);
  }
  return response.body.data;
}

/** A client of the site `subdomain` signed in as the user: an access token, as driver and console apps hold one. */
export async function sessionClient(server: TestServer, subdomain: string, user: { email: string; password: string }): Promise<ApiClient> {
  const { access_token } = await signIn(server.client(subdomain), user.email, user.password);
  return server.client(subdomain).as({ accessToken: access_token });
}
