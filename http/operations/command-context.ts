import type { CommandContext } from '../../engine/engine.ts';
import type { JobActor } from '../../engine/jobs/job-input.ts';
import type { Site } from '../../persistence/entities/site.entity.ts';
import type { Principal } from '../auth/principal.ts';
import { requireSite } from '../tenancy.ts';

/** The engine's view of a site-host request: the site, and who acts with which role. */
export function commandContext(ctx: { site: Site | null; principal: Principal | null; requestId: string }): CommandContext & { actor: JobActor } {
  const site = requireSite(ctx.site);
  const principal = ctx.principal;
  if (!principal || principal.role === 'platform') throw new Error('a site command ran without a site principal');
  return {
    siteId: site.id,
    actor: { userId: principal.userId, applicationId: principal.applicationId, requestId: ctx.requestId, role: principal.role },
  };
}
