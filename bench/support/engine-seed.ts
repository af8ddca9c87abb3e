import type { MikroORM } from '@mikro-orm/postgresql';
import { createOrganization } from '../../engine/admin/organization.service.ts';
import { createSite } from '../../engine/admin/site.service.ts';
import { createUser } from '../../engine/admin/user.service.ts';
import type { CommandContext, Engine } from '../../engine/engine.ts';
import { createJob } from '../../engine/jobs/job.service.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { inParallel } from './command-load.ts';

const SEED_ACTOR = { userId: null, applicationId: null, requestId: 'bench-engine-seed' };

export type EngineSite = { siteId: string; adminUserId: string; customerUserId: string };

/**
 * One site (with its default workflows, written by createSite), an admin who acts in the commands and a customer
 * the jobs belong to. Users get no password: Argon2 hashing would only slow the setup.
 */
export async function seedEngineSite(orm: MikroORM, subdomain: string): Promise<EngineSite> {
  const site = await inTenantScope(orm, { siteId: null, platform: true }, async (em) => {
    const organization = await createOrganization(em, SEED_ACTOR, { name: `${subdomain} org` });
    return createSite(em, SEED_ACTOR, { name: subdomain, organization_id: organization.id, subdomain });
  });
  const user = (email: string, role: 'admin' | 'customer') =>
    inTenantScope(orm, { siteId: site.id }, (em) => createUser(em, SEED_ACTOR, { siteId: site.id }, { email, role, first_name: role, last_name: 'Bench' }));
  const admin = await user(`admin@${subdomain}.example`, 'admin');
  const customer = await user(`customer@${subdomain}.example`, 'customer');
  return { siteId: site.id, adminUserId: admin.user.id, customerUserId: customer.user.id };
}

/** The context every bench command runs with: the admin user, acting as a dispatcher (as the issue asks). */
export function dispatcherContext(site: EngineSite): CommandContext {
  return { siteId: site.siteId, actor: { userId: site.adminUserId, applicationId: null, requestId: null, role: 'dispatcher' } };
}

export type SeededJob = { id: string; stopId: string };

/**
 * `count` jobs created through the command path (`engine.command` + createJob, as POST /api/job does), each with
 * one inline stop: the fewest a job may have, so a job dispatch cascades to exactly one stop.
 */
export async function createJobs(engine: Engine, ctx: CommandContext, customerUserId: string, count: number, concurrency: number): Promise<SeededJob[]> {
  const jobs: SeededJob[] = [];
  await inParallel(count, concurrency, async (i) => {
    const data = await engine.command(ctx, `job:new:bench-${i}`, (scope) =>
      createJob(scope, {
        customer_user_id: customerUserId,
        stops: [{ type: 'pickup', street_address: `${i} Rue de Rivoli`, city: 'Paris', point: { lat: 48.8556, lng: 2.3522 } }],
      }),
    );
    const stopId = data.stops?.[0]?.id;
    if (!stopId) throw new Error(`job ${data.id} came back without its stop`);
    jobs.push({ id: data.id, stopId });
  });
  return jobs;
}
