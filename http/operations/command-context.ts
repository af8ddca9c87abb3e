import type { CommandContext } from '../../engine/engine.ts';
import type { WorkflowLookup } from '../../engine/runtime/answer-at-commit.ts';
import type { TenantRead } from '../../engine/runtime/tenant-read.ts';
import { workflowsOutsideTransaction } from '../../engine/workflow/workflow.service.ts';
import type { JobActor } from '../../engine/jobs/job-input.ts';
import type { Site } from '../../persistence/entities/site.entity.ts';
import type { Principal } from '../auth/principal.ts';
import type { OperationContext } from '../operation.ts';
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

/**
 * What the one-statement reads of a site's records take (`readVisibleJobDetail`, `searchJobs`, `listPool`,
 * `readVisibleRoute`, ...): the request's read in one round trip, the workflows outside any transaction, the site,
 * and the actor as `commandContext` gives it.
 */
export function siteReads(ctx: Pick<OperationContext<unknown, unknown, unknown>, 'read' | 'site' | 'principal' | 'requestId' | 'services'>): [TenantRead, WorkflowLookup, string, JobActor] {
  const { siteId, actor } = commandContext(ctx);
  return [ctx.read, workflowsOutsideTransaction(ctx.services.db.orm, siteId), siteId, actor];
}
