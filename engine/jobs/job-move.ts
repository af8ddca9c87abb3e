import { JobSchema } from '../../persistence/entities/job.entity.ts';
import { applyTransition, type CommandScope, type TransitionRequest } from '../commands/apply-transition.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { checkDriverLoadOnEntry } from '../dispatch/driver-load-check.ts';
import { DomainError } from '../domain-error.ts';
import { findVisibleJob, jobDetail } from './job-detail.ts';
import { isStaff } from './job-input.ts';
import type { JobData, JobRecord } from './job-view.ts';

/**
 * Moves a job for the caller and answers the job as the move left it, all in the command's transaction. Staff see
 * every job of the site (the transition answers 404 itself); a driver or customer must see the job before the
 * move. The answer is read in the same transaction because a move may take the job out of the caller's view (a
 * driver returning their job leaves it unassigned, without them), and the caller is still owed its result.
 * A job completes only once none of its stops is open (see {@link refuseWhileStopsOpen}); a failure (a move declared
 * `event: 'fail'`, as `failed`) may end it early: its open stops are cancelled with the move's reason, in the command.
 * @throws DomainError 404, 400 UNKNOWN_STATE_ID, 409 INVALID_TRANSITION, 422 REQUIREMENT_NOT_MET, 409 JOB_HAS_OPEN_STOPS,
 *   409 DRIVER_AT_CAPACITY
 */
export async function moveJob(scope: CommandScope, id: string, request: TransitionRequest, notes: { cancellationNotes?: string }): Promise<JobData> {
  if (!isStaff(scope.actor.role)) await findVisibleJob(scope.em, scope.actor, id);
  const applied = await applyTransition(scope, 'job', id, request, notes);
  const ending = applied.to.phase === 'completed' && applied.from.phase !== 'completed';
  const failure = ending && applied.failure;
  if (ending && !failure) await refuseWhileStopsOpen(scope, id, 'it completes when its last stop ends');
  await applyCascades(scope, applied, notes);
  // The cascade cancels the failed job's open stops; one whose workflow refuses that (no cancel move from its state,
  // or a requirement the reason does not meet) would stay open under an ended job.
  if (failure) await refuseWhileStopsOpen(scope, id, 'their workflow does not let them be cancelled');
  // A job created for a driver and moved into an open phase takes one of their max_load slots, as a dispatch does.
  await checkDriverLoadOnEntry(scope, applied.entity as JobRecord, applied.from.phase, applied.to.phase);
  // The transition wrote with SQL: refresh past the ORM's identity map.
  const job = await scope.em.findOneOrFail(JobSchema, { id }, { refresh: true });
  return jobDetail(scope.em, scope.actor, job);
}

/**
 * A job completed while a stop is still open would leave that stop open for good (no rule moves a completed job's
 * stops), skip the stops' own requirements (proof, notes), and still complete its route and count its earnings. So
 * that move is refused (the command rolls back: nothing is written); the job completes by itself when its last stop
 * ends, or its stops are cancelled or failed first. Checked after the workflow's own check, so a move the workflow
 * refuses still says INVALID_TRANSITION. A stop another transaction is ending at the same moment may still read open:
 * the move is then refused, and that stop move completes the job. `why` ends the message.
 * @throws DomainError 409 JOB_HAS_OPEN_STOPS naming the open stops (`details.open_stop_ids`)
 */
async function refuseWhileStopsOpen(scope: CommandScope, jobId: string, why: string): Promise<void> {
  const open = await scope.em.execute<{ id: string }[]>(
    "select id from stop where job_id = ? and site_id = ? and phase not in ('completed', 'cancelled') order by sort_order, id",
    [jobId, scope.siteId],
  );
  if (open.length === 0) return;
  const ids = open.map((stop) => stop.id);
  throw new DomainError(409, 'JOB_HAS_OPEN_STOPS', `Job ${jobId} still has open stops: ${ids.join(', ')}; ${why}`, 'workflow_state_id', {
    open_stop_ids: ids,
  });
}
