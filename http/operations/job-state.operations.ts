import { Type } from 'typebox';
import { bulkCancel, bulkDelete, bulkDuplicate } from '../../engine/jobs/job-bulk.ts';
import { moveJob } from '../../engine/jobs/job-move.ts';
import { jobTimeline } from '../../engine/jobs/job-timeline.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, Id } from '../schemas/common.schema.ts';
import { BulkCancelBody, BulkIdsBody, BulkIdsResult, BulkJobsResult, JobResponse, JobStateBody, TimelineResponse } from '../schemas/job.schema.ts';
import { commandContext } from './command-context.ts';
import { logItemFailure } from '../item-failure-log.ts';

export const jobStateOperations = [
  defineOperation({
    id: 'job.state',
    method: 'POST',
    path: '/job/state',
    summary: "Move a job to a state of its workflow (the site's transition table and the caller's role decide)",
    description:
      'A move the workflow does not allow is 409 INVALID_TRANSITION, with the current state and the allowed moves in details; ' +
      'one it allows but whose requirements are not met is 422 REQUIREMENT_NOT_MET, with what is missing in details.missing. ' +
      'A job created for a driver and moved into an assigned or in-progress state while the driver is at their max_load of open jobs is 409 DRIVER_AT_CAPACITY. ' +
      'A move into a completed phase while a stop is open is 409 JOB_HAS_OPEN_STOPS (open_stop_ids in details): the job completes when its last stop ends; ' +
      "a failure (a move declared event 'fail') is made, and cancels the open stops with its cancellation_notes.",
    tag: 'Jobs',
    access: 'job.state',
    host: 'site',
    body: JobStateBody,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const { job_id: id, workflow_state_id: toStateId, cancellation_notes: notes } = ctx.body;
      const data = await ctx.services.engine.command(command, `job:${id}`, (scope) =>
        moveJob(scope, id, { kind: 'move', toStateId }, notes === undefined ? {} : { cancellationNotes: notes }),
      );
      return { data };
    },
  }),
  defineOperation({
    id: 'job.timeline',
    method: 'GET',
    path: '/job/{id}/timeline',
    summary: "A job's transitions (from, to, event, role, user, time) and the moves the caller may make now",
    tag: 'Jobs',
    access: 'job.read',
    host: 'site',
    params: Type.Object({ id: Id }, { additionalProperties: false }),
    response: DataResponse(TimelineResponse),
    handler: async (ctx) => {
      const { actor } = commandContext(ctx);
      return { data: await ctx.transaction((em) => jobTimeline(em, actor, ctx.params.id)) };
    },
  }),
  defineOperation({
    id: 'job.bulk.cancel',
    method: 'POST',
    path: '/job/bulk/cancel',
    summary: 'Cancel jobs (and their open stops); each id succeeds or fails on its own',
    tag: 'Jobs',
    access: 'job.bulk',
    host: 'site',
    body: BulkCancelBody,
    response: BulkIdsResult,
    handler: async (ctx) => bulkCancel(ctx.services.engine, commandContext(ctx), ctx.body.ids, ctx.body.cancellation_notes, logItemFailure(ctx, 'job.bulk.cancel')),
  }),
  defineOperation({
    id: 'job.bulk.delete',
    method: 'POST',
    path: '/job/bulk/delete',
    summary: 'Delete jobs that are not being worked (unassigned, completed or cancelled)',
    tag: 'Jobs',
    access: 'job.bulk',
    host: 'site',
    body: BulkIdsBody,
    response: BulkIdsResult,
    handler: async (ctx) => bulkDelete(ctx.services.engine, commandContext(ctx), ctx.body.ids, logItemFailure(ctx, 'job.bulk.delete')),
  }),
  defineOperation({
    id: 'job.bulk.duplicate',
    method: 'POST',
    path: '/job/bulk/duplicate',
    summary: 'Copy jobs with their stops as new jobs in the initial state',
    tag: 'Jobs',
    access: 'job.bulk',
    host: 'site',
    body: BulkIdsBody,
    response: BulkJobsResult,
    handler: async (ctx) => bulkDuplicate(ctx.services.engine, commandContext(ctx), ctx.body.ids, logItemFailure(ctx, 'job.bulk.duplicate')),
  }),
];
