import { randomBytes } from 'node:crypto';
import { createApplication } from '../engine/admin/application.service.ts';
import { createOrganization } from '../engine/admin/organization.service.ts';
import { createSite } from '../engine/admin/site.service.ts';
import { createUser } from '../engine/admin/user.service.ts';
import { OrganizationSchema } from '../persistence/entities/organization.entity.ts';
import { SiteSchema } from '../persistence/entities/site.entity.ts';
import { UserSchema } from '../persistence/entities/user.entity.ts';
import { hashPassword } from '../persistence/secrets.ts';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import type { Services } from './services.ts';

export const DEMO_SUBDOMAIN = 'demo';
const DEMO_USERS = [
  { role: 'platform', email: 'operator@demo.example', first_name: 'Olga', last_name: 'Operator' },
  { role: 'admin', email: 'admin@demo.example', first_name: 'Ada', last_name: 'Admin' },
  { role: 'dispatcher', email: 'dispatcher@demo.example', first_name: 'Dan', last_name: 'Dispatcher' },
  { role: 'driver', email: 'driver@demo.example', first_name: 'Dora', last_name: 'Driver' },
  { role: 'customer', email: 'customer@demo.example', first_name: 'Cass', last_name: 'Customer' },
] as const;

export type DemoCredentials = {
  site: { id: string; subdomain: string; url: string };
  platform_url: string;
  users: { role: string; email: string; password: string }[];
  api_key: { id: string; role: string; key: string };
};

const SEED_ACTOR = { userId: null, applicationId: null, requestId: 'seed' };

/** First start: creates the demo organization, site and users and prints their credentials once. */
export async function seedDemoIfEmpty(services: Services): Promise<void> {
  const existing = await services.db.orm.em.fork().count(OrganizationSchema, {});
  if (existing > 0) return;
  printCredentials(await seedDemo(services));
}

/**
 * Makes sure the demo organization, site `demo` and one user per role exist, then gives every demo user a fresh
 * random password and issues a new admin API key. Secrets are only ever shown in the returned value.
 */
export async function seedDemo(services: Services): Promise<DemoCredentials> {
  const orm = services.db.orm;
  const platform = { siteId: null, platform: true };
  const site = await inTenantScope(orm, platform, async (em) => {
    const found = await em.findOne(SiteSchema, { subdomain: DEMO_SUBDOMAIN });
    if (found) return found;
    const organization = await createOrganization(em, SEED_ACTOR, { name: 'Demo Couriers', email: 'ops@demo.example' });
    return createSite(em, SEED_ACTOR, { name: 'Demo', organization_id: organization.id, subdomain: DEMO_SUBDOMAIN, currency: 'EUR', timezone: 'Europe/Paris' });
  });
  const users: DemoCredentials['users'] = [];
  for (const demo of DEMO_USERS) {
    const password = randomBytes(12).toString('base64url');
    await inTenantScope(orm, platform, async (em) => {
      let user = await em.findOne(UserSchema, { email: demo.email });
      if (!user) {
        const role = demo.role === 'platform' ? undefined : demo.role;
        user = (await createUser(em, SEED_ACTOR, { siteId: null }, { ...demo, role, site_id: role ? site.id : undefined })).user;
      }
      user.passwordHash = await hashPassword(password);
      user.isPlatformOperator = demo.role === 'platform';
      await em.flush();
    });
    users.push({ role: demo.role, email: demo.email, password });
  }
  const { application, apiKey } = await inTenantScope(orm, { siteId: site.id }, (em) =>
    createApplication(em, SEED_ACTOR, site.id, { name: `Demo key ${new Date().toISOString()}`, role: 'admin' }),
  );
  const port = services.config.port;
  return {
    site: { id: site.id, subdomain: site.subdomain, url: `http://${site.subdomain}.${services.config.baseDomain}:${port}` },
    platform_url: `http://${services.config.baseDomain}:${port}`,
    users,
    api_key: { id: application.id, role: application.role, key: apiKey },
  };
}

export function printCredentials(credentials: DemoCredentials): void {
  const lines = [
    '',
    '  Demo data created. These secrets are shown once; `npm run seed` issues new ones.',
    `  Site ${credentials.site.subdomain}: ${credentials.site.url}   platform host: ${credentials.platform_url}`,
    ...credentials.users.map((u) => `    ${u.role.padEnd(10)} ${u.email.padEnd(26)} ${u.password}`),
    `  API key (${credentials.api_key.role}): ${credentials.api_key.key}`,
    `  Try: curl -H 'x-api-key: ${credentials.api_key.key}' ${credentials.site.url}/api/auth/me`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
