import { readVisibleJobDetail, readVisibleStop } from '../../engine/jobs/job-detail-row.ts';
import { updateStop } from '../../engine/jobs/stop-update.ts';
import { defineOperation } from '../operation.ts';
import { DataResponse, IdQuery } from '../schemas/common.schema.ts';
import { JobResponse, StopPutBody, StopResponse, StopStateBody } from '../schemas/job.schema.ts';
import { commandContext, siteReads } from './command-context.ts';
import { moveDriverStop } from '../../engine/jobs/driver-stop-move.ts';

export const stopOperations = [
  defineOperation({
    id: 'stop.get',
    method: 'GET',
    path: '/stop',
    summary: 'Get a stop with its address and state',
    tag: 'Jobs',
    access: 'job.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(StopResponse),
    handler: async (ctx) => ({ data: await readVisibleStop(...siteReads(ctx), ctx.query.id) }),
  }),
  defineOperation({
    id: 'stop.update',
    method: 'PUT',
    path: '/stop',
    summary: "Update a stop's details (address, time window, contact, notes): supplied fields change, null clears",
    tag: 'Jobs',
    access: 'stop.update',
    host: 'site',
    body: StopPutBody,
    response: DataResponse(StopResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const { override_zone_restriction: override, ...patch } = ctx.body;
      await ctx.services.engine.command(command, `stop:${ctx.body.id}`, (scope) => updateStop(scope, patch, override === true));
      return { data: await readVisibleStop(...siteReads(ctx), ctx.body.id) };
    },
  }),
  defineOperation({
    id: 'stop.state',
    method: 'POST',
    path: '/stop/state',
    summary: "Move a stop to a state of its workflow; the job follows (all stops done completes it)",
    description: 'As /job/state: 409 INVALID_TRANSITION for a move the workflow does not allow, 422 REQUIREMENT_NOT_MET for one whose requirements are not met.',
    tag: 'Jobs',
    access: 'job.state',
    host: 'site',
    body: StopStateBody,
    response: DataResponse(JobResponse),
    handler: async (ctx) => {
      const command = commandContext(ctx);
      const { stop_id: id, workflow_state_id: toStateId, cancellation_notes: notes } = ctx.body;
      // A driver's move is checked against the job's driver inside its own command, as POST /driver/stop/state
      // checks it: a job given to someone else between a check and the move cannot be moved by its old driver.
      if (command.actor.role === 'driver') {
        const data = await ctx.services.engine.command(command, `stop:${id}`, (scope) => moveDriverStop(scope, id, toStateId, notes === undefined ? {} : { cancellationNotes: notes }));
        return { data };
      }
      const reading = siteReads(ctx);
      const { job_id: jobId } = await readVisibleStop(...reading, id);
      await ctx.services.engine.transition(command, 'stop', id, { kind: 'move', toStateId }, notes === undefined ? {} : { cancellationNotes: notes });
      return { data: await readVisibleJobDetail(...reading, jobId) };
    },
  }),
];
