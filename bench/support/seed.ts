import type { MikroORM } from '@mikro-orm/postgresql';
import { createApplication } from '../../engine/admin/application.service.ts';
import { createOrganization } from '../../engine/admin/organization.service.ts';
import { createSite } from '../../engine/admin/site.service.ts';
import { createUser } from '../../engine/admin/user.service.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';

const ACTOR = { userId: null, applicationId: null, requestId: 'bench-seed' };

/**
 * One site with an admin API key and `userCount` users, so `/user/search?page_size=20` returns a full page (an
 * empty list would flatter the list call). Users get no password: Argon2 hashing would only slow the setup.
 * @returns the admin API key (plain; the database keeps only its hash) and its application id
 */
export async function seedSite(orm: MikroORM, subdomain: string, userCount: number): Promise<{ apiKey: string; applicationId: string }> {
  const site = await inTenantScope(orm, { siteId: null, platform: true }, async (em) => {
    const organization = await createOrganization(em, ACTOR, { name: `${subdomain} org` });
    return createSite(em, ACTOR, { name: subdomain, organization_id: organization.id, subdomain });
  });
  await inTenantScope(orm, { siteId: site.id }, async (em) => {
    for (let i = 0; i < userCount; i++) {
      const role = i % 4 === 0 ? 'dispatcher' : i % 4 === 1 ? 'driver' : 'customer';
      const n = String(i).padStart(3, '0');
      await createUser(em, ACTOR, { siteId: site.id }, { email: `user${n}@${subdomain}.example`, role, first_name: `User${n}`, last_name: 'Bench' });
    }
  });
  const { apiKey, application } = await inTenantScope(orm, { siteId: site.id }, (em) =>
    createApplication(em, ACTOR, site.id, { name: 'bench admin key', role: 'admin' }),
  );
  return { apiKey, applicationId: application.id };
}
