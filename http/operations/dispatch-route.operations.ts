import type { EntityManager } from '@mikro-orm/postgresql';
import { bulkDistribute } from '../../engine/dispatch/bulk-distribute.ts';
import { dispatchDeps } from '../../engine/dispatch/dispatch-deps.ts';
import { mappingProviderForSite } from '../../engine/mapping/site-provider.ts';
import { dispatchRouteTo, dispatchRouteToTeam } from '../../engine/dispatch/route-dispatch.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse } from '../schemas/common.schema.ts';
import { BulkDistributeBody, BulkDistributeResult, RouteDispatchBody, RouteDispatchResult, TeamRouteBody } from '../schemas/dispatch.schema.ts';
import { requireSite } from '../tenancy.ts';
import { commandContext } from './command-context.ts';
import { mappingPolicyOf } from '../../engine/eta/eta-check.ts';

/** Dispatch of many jobs at once: a whole route, a route to a team, and bulk distribution over a team. */
export const dispatchRouteOperations = [
  defineOperation({
    id: 'dispatch.route',
    method: 'POST',
    path: '/dispatch/route',
    summary: "Dispatch a route: the driver (and vehicle) take every unassigned job on it",
    description: 'Per-job failures are listed in failed_jobs (and, as the spec shapes bulk results, in failed beside succeeded); the others are dispatched. start_at in the future stores the dispatch and carries it out then.',
    tag: 'Dispatch',
    access: 'dispatch.manage',
    host: 'site',
    body: RouteDispatchBody,
    response: DataResponse(RouteDispatchResult),
    handler: async (ctx) => ({ data: withRouteParts(await dispatchRouteTo(dispatchDeps(ctx.services), commandContext(ctx), ctx.body)) }),
  }),
  defineOperation({
    id: 'dispatch.teamRoute',
    method: 'POST',
    path: '/dispatch/team/route',
    summary: 'Dispatch a route to a driver of a team picked by selection_strategy (eta, load, round-robin)',
    tag: 'Dispatch',
    access: 'dispatch.manage',
    host: 'site',
    body: TeamRouteBody,
    response: DataResponse(RouteDispatchResult),
    handler: async (ctx) => ({ data: withRouteParts(await dispatchRouteToTeam(dispatchDeps(ctx.services), commandContext(ctx), ctx.body)) }),
  }),
  defineOperation({
    id: 'dispatch.bulkDistribute',
    method: 'POST',
    path: '/dispatch/bulk-distribute',
    summary: "Spread jobs over a team's eligible drivers, balanced by load then distance",
    description:
      "optimize_routes assigns and orders the jobs with the route optimizer (capacity, shifts, time windows, the site's travel matrix, " +
      'within time_budget_ms); per-job failures (including those the optimizer cannot place, with the reason) are listed in failed_jobs. ' +
      'start_at in the future stores the batch and runs it then.',
    tag: 'Dispatch',
    access: 'dispatch.manage',
    host: 'site',
    body: BulkDistributeBody,
    response: DataResponse(BulkDistributeResult),
    handler: async (ctx) => {
      const { config, crypto } = ctx.services;
      const policy = mappingPolicyOf(config);
      const site = requireSite(ctx.site);
      const providerFor = (em: EntityManager) => mappingProviderForSite(em, crypto, site.id, policy);
      const result = await bulkDistribute(dispatchDeps(ctx.services), commandContext(ctx), ctx.body, providerFor);
      const succeeded = result.scheduled ? result.dispatches.flatMap((d) => (d.job_id ? [d.job_id] : [])) : result.routes.flatMap((r) => r.dispatched_job_ids);
      return { data: withBulkParts(result, succeeded) };
    },
  }),
];

type FailedJobs = { failed_jobs: { job_id: string; error: string; code: string }[] };

/** The spec's bulk result beside the detailed one: `succeeded` (job ids) and `failed` (each failed job as {id, error, code}). */
function withBulkParts<T extends FailedJobs>(result: T, succeeded: string[]): T & { succeeded: string[]; failed: { id: string; error: string; code: string }[] } {
  return { ...result, succeeded, failed: result.failed_jobs.map((f) => ({ id: f.job_id, error: f.error, code: f.code })) };
}

const withRouteParts = <T extends FailedJobs & { dispatched_job_ids: string[] }>(result: T) => withBulkParts(result, result.dispatched_job_ids);
