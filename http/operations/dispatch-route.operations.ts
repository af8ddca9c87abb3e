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

/** Dispatch of many jobs at once: a whole route, a route to a team, and bulk distribution over a team. */
export const dispatchRouteOperations = [
  defineOperation({
    id: 'dispatch.route',
    method: 'POST',
    path: '/dispatch/route',
    summary: "Dispatch a route: the driver (and vehicle) take every unassigned job on it",
    description: 'Per-job failures are listed in failed_jobs; the others are dispatched. start_at in the future stores the dispatch and carries it out then.',
    tag: 'Dispatch',
    access: 'dispatch.manage',
    host: 'site',
    body: RouteDispatchBody,
    response: DataResponse(RouteDispatchResult),
    handler: async (ctx) => ({ data: await dispatchRouteTo(dispatchDeps(ctx.services), commandContext(ctx), ctx.body) }),
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
    handler: async (ctx) => ({ data: await dispatchRouteToTeam(dispatchDeps(ctx.services), commandContext(ctx), ctx.body) }),
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
      const policy = { allowLoopback: config.webhookAllowLoopback, allowPrivateNetworks: config.mappingAllowPrivateNetworks };
      const site = requireSite(ctx.site);
      const providerFor = (em: EntityManager) => mappingProviderForSite(em, crypto, site.id, policy);
      return { data: await bulkDistribute(dispatchDeps(ctx.services), commandContext(ctx), ctx.body, providerFor) };
    },
  }),
];
