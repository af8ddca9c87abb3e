import { moveOwnJob } from '../../engine/drivers/driver-jobs.ts';
import { jobDetailAtCommit } from '../../engine/jobs/job-detail-row.ts';
import { moveDriverStop } from '../../engine/jobs/driver-stop-move.ts';
import { searchJobs } from '../../engine/jobs/job-search.ts';
import { defineOperation } from '../operation.ts';
import { readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { DataResponse } from '../schemas/common.schema.ts';
import { DriverCancelBody, DriverJobSearchBody, DriverReturnBody, DriverStopStateBody } from '../schemas/driver.schema.ts';
import { JobResponse } from '../schemas/job.schema.ts';
import { commandContext, siteReads } from './command-context.ts';

const SORTABLE = { created_at: 'createdAt', completed_at: 'completedAt', id: 'id' };

export const driverJobOperations = [
  defineOperation({
    id: 'driver.job.cancel',
    method: 'POST',
    path: '/driver/job/cancel',
    summary: "Cancel one of the calling driver's jobs, with the reason; its open stops are cancelled too",
    description:
      "The job workflow's roles decide (409 INVALID_TRANSITION otherwise); a move they allow whose requirements are not met (an attachment) is 422 REQUIREMENT_NOT_MET, " +
      "with what is missing in details.missing; another driver's job is 404.",
    tag: 'Drivers',
    access: 'driver.self',
    host: 'site',
    body: DriverCancelBody,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const { job_id: id, cancellation_notes: notes } = ctx.body;
      // The cancelled job as the driver sees it, read with the COMMIT.
      const data = await ctx.services.engine.command(command, `job:${id}`, async (scope) => {
        await moveOwnJob(scope, id, { kind: 'phase', event: 'cancel' }, { cancellationNotes: notes });
        return jobDetailAtCommit(scope.siteId, command.actor, id);
      });
      return { data };
    },
  }),
  defineOperation({
    id: 'driver.job.return',
    method: 'POST',
    path: '/driver/job/return',
    summary: "Give one of the calling driver's jobs back: it returns to unassigned without driver or route",
    description:
      "The job workflow's roles decide (409 INVALID_TRANSITION otherwise); a move they allow whose requirements are not met is 422 REQUIREMENT_NOT_MET, " +
      "with what is missing in details.missing; another driver's job is 404.",
    tag: 'Drivers',
    access: 'driver.self',
    host: 'site',
    body: DriverReturnBody,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const id = ctx.body.job_id;
      // As the driver sees a job (no internal notes), read with the COMMIT, though once returned it is no longer theirs to read.
      const data = await ctx.services.engine.command(command, `job:${id}`, async (scope) => {
        await moveOwnJob(scope, id, { kind: 'phase', event: 'return' });
        return jobDetailAtCommit(scope.siteId, command.actor, id);
      });
      return { data };
    },
  }),
  defineOperation({
    id: 'driver.stop.state',
    method: 'POST',
    path: '/driver/stop/state',
    summary: "Move a stop of one of the calling driver's jobs; the job follows (all stops done completes it)",
    description:
      'A move the stop workflow does not allow the driver is 409 INVALID_TRANSITION, with the current state and the allowed moves in details; ' +
      'one it allows whose requirements are not met (cancellation_notes, an attachment linked to the stop) is 422 REQUIREMENT_NOT_MET, with what is missing in details.missing. ' +
      "A stop of a job not dispatched yet is 409 JOB_NOT_DISPATCHED; another driver's stop is 404.",
    tag: 'Drivers',
    access: 'driver.self',
    host: 'site',
    body: DriverStopStateBody,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const { stop_id: id, workflow_state_id: toStateId, cancellation_notes: notes } = ctx.body;
      // The job after the move (as POST /job/state answers), read or built within the command's own transaction.
      const data = await ctx.services.engine.command(command, `stop:${id}`, (scope) =>
        moveDriverStop(scope, id, toStateId, notes === undefined ? {} : { cancellationNotes: notes }),
      );
      return { data };
    },
  }),
  defineOperation({
    id: 'driver.job.search',
    method: 'POST',
    path: '/driver/job/search',
    summary: "The calling driver's jobs, by workflow state and completion time ([start, end))",
    tag: 'Drivers',
    access: 'driver.self',
    host: 'site',
    body: DriverJobSearchBody,
    response: SearchResponse(JobResponse),
    handler: async (ctx) => {
      const { workflow_state_ids, completed_at_start, completed_at_end } = ctx.body;
      const paging = readPaging(ctx.body, SORTABLE, '-created_at');
      const filter = { workflow_state_ids, completed_from: completed_at_start, completed_to: completed_at_end };
      // The driver role alone scopes the search to the caller's jobs (visibleTo).
      const [jobs, total] = await searchJobs(...siteReads(ctx), filter, { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy });
      return searchBody(jobs, total, paging);
    },
  }),
];
