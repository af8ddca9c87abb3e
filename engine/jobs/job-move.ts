import { JobSchema } from '../../persistence/entities/job.entity.ts';
import { applyTransition, type CommandScope, type TransitionRequest } from '../commands/apply-transition.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { findVisibleJob, jobDetail } from './job-detail.ts';
import { isStaff } from './job-input.ts';
import type { JobData } from './job-view.ts';

/**
 * Moves a job for the caller and answers the job as the move left it, all in the command's transaction. Staff see
 * every job of the site (the transition answers 404 itself); a driver or customer must see the job before the
 * move. The answer is read in the same transaction because a move may take the job out of the caller's view (a
 * driver returning their job leaves it unassigned, without them), and the caller is still owed its result.
 * @throws DomainError 404, 400 UNKNOWN_STATE_ID, 409 INVALID_TRANSITION
 */
export async function moveJob(scope: CommandScope, id: string, request: TransitionRequest, notes: { cancellationNotes?: string }): Promise<JobData> {
  if (!isStaff(scope.actor.role)) await findVisibleJob(scope.em, scope.actor, id);
  const applied = await applyTransition(scope, 'job', id, request, notes);
  await applyCascades(scope, applied, notes);
  // The transition wrote with SQL: refresh past the ORM's identity map.
  const job = await scope.em.findOneOrFail(JobSchema, { id }, { refresh: true });
  return jobDetail(scope.em, scope.actor, job);
}
