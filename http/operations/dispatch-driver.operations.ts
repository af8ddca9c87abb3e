import { Type } from 'typebox';
import { toBriefDispatchData, toDispatchData } from '../../engine/dispatch/dispatch-record.ts';
import { outcome, toDispatchConflict } from '../../engine/dispatch/dispatch.service.ts';
import { acceptDispatch } from '../../engine/dispatch/dispatch-acceptance.ts';
import { claimFromPool, listPool, postToPool } from '../../engine/dispatch/pool.ts';
import { eachId } from '../../engine/bulk-outcomes.ts';
import { defineOperation } from '../operation.ts';
import { listBody, ListResponse, pagingQuery, readPaging } from '../pagination.ts';
import { DataResponse } from '../schemas/common.schema.ts';
import { AssignResult, DispatchIdBody, DriverDispatchResponse, PoolJobResponse, PoolPostBody, PoolPostResult } from '../schemas/dispatch.schema.ts';
import { commandContext, siteReads } from './command-context.ts';
import { logItemFailure } from '../item-failure-log.ts';

/** The pool's order: by posting time (ties by the offer's id). */
const POOL_SORTABLE = { posted_at: 'posted_at' };
const PoolQuery = Type.Object(pagingQuery(POOL_SORTABLE), { additionalProperties: false });

/** The opt-in pool (post, list, claim) and a driver's acceptance of a dispatch. */
export const dispatchDriverOperations = [
  defineOperation({
    id: 'dispatch.pool.post',
    method: 'POST',
    path: '/dispatch/pool',
    summary: "Offer unassigned jobs in the pool: to a team's drivers, or site-wide without team_id",
    description: 'Per-job failures (not unassigned, banned zone, already offered) are listed in failed; the others are posted.',
    tag: 'Dispatch',
    access: 'dispatch.manage',
    host: 'site',
    body: PoolPostBody,
    response: DataResponse(PoolPostResult),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const now = ctx.services.clock.now();
      const postedAt = ctx.body.start_at && new Date(ctx.body.start_at) > now ? new Date(ctx.body.start_at) : now;
      const post = async (jobId: string) => {
        try {
          return toDispatchData(await ctx.services.engine.command(command, `job:${jobId}`, (scope) => postToPool(scope, jobId, ctx.body.team_id || null, postedAt)));
        } catch (thrown) {
          throw toDispatchConflict(thrown, jobId);
        }
      };
      return { data: await eachId(ctx.body.job_ids, post, { concurrency: 8, onInternalError: logItemFailure(ctx, 'dispatch.pool.post') }) };
    },
  }),
  defineOperation({
    id: 'dispatch.pool.list',
    method: 'GET',
    path: '/dispatch/pool',
    summary: 'The pool jobs the calling driver may claim now (their teams\' offers and site-wide ones), oldest first (sort=-posted_at: newest)',
    tag: 'Dispatch',
    access: 'driver.self',
    host: 'site',
    query: PoolQuery,
    response: ListResponse(PoolJobResponse),
    handler: async (ctx) => {
      const paging = readPaging(ctx.query, POOL_SORTABLE, 'posted_at');
      const page = { limit: paging.perPage, offset: paging.offset, direction: paging.orderBy.posted_at ?? 'asc' };
      const [offers, total] = await listPool(...siteReads(ctx), ctx.services.clock.now(), page);
      return listBody(offers, total, paging);
    },
  }),
  defineOperation({
    id: 'dispatch.claim',
    method: 'POST',
    path: '/dispatch/claim',
    summary: 'Claim a pool job: exactly one driver wins, the others get 409 ALREADY_CLAIMED',
    description: "The job is dispatched to the caller at once (their default vehicle, their open route of the day); a claim counts as accepted.",
    tag: 'Dispatch',
    access: 'driver.self',
    host: 'site',
    body: DispatchIdBody,
    response: DataResponse(AssignResult),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const id = ctx.body.dispatch_id;
      return { data: await ctx.services.engine.command(command, `dispatch:${id}`, async (scope) => outcome(scope, await claimFromPool(scope, id))) };
    },
  }),
  defineOperation({
    id: 'dispatch.accept',
    method: 'POST',
    path: '/dispatch/accept',
    summary: 'The assigned driver accepts a dispatch that required confirmation',
    description:
      'Records driver_accepted and driver_accepted_at, moves the dispatch to processing and the job to its accepted state ' +
      '(a job the driver already accepted or started, or staff moved on, keeps its state: only the acceptance is recorded). ' +
      'A record this driver already accepted is answered as it is (200, nothing written); one not awaiting this driver\'s confirmation is 409 NOT_AWAITING_CONFIRMATION; a job whose workflow does not let the driver accept is 409 INVALID_TRANSITION, ' +
      'and one whose accept move has requirements not met (an attachment) is 422 REQUIREMENT_NOT_MET, with what is missing in details.missing.',
    tag: 'Dispatch',
    access: 'driver.self',
    host: 'site',
    body: DispatchIdBody,
    response: DataResponse(DriverDispatchResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const id = ctx.body.dispatch_id;
      // The driver's answer: the decision without the colleagues it ranked.
      return { data: toBriefDispatchData(await ctx.services.engine.command(command, `dispatch:${id}`, (scope) => acceptDispatch(scope, id))) };
    },
  }),
];
