import { applyTransition, loadEntity, type CommandScope, type TransitionRequest } from '../commands/apply-transition.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { DomainError } from '../domain-error.ts';
import type { JobRecord } from '../jobs/job-view.ts';

/**
 * The driver's own job, read in the command's transaction: checking ownership there (not before the command)
 * means a job reassigned meanwhile cannot be moved by its former driver. Another driver's job is 404, as on
 * every job read.
 */
async function ownJob(scope: CommandScope, jobId: string): Promise<JobRecord | null> {
  const job = (await loadEntity(scope, 'job', jobId)) as JobRecord | null;
  return job && job.driverUserId !== null && job.driverUserId === scope.actor.userId ? job : null;
}

/**
 * A phase event on the driver's own job (`cancel` with the notes, `return`), with the parent/child rules
 * (cancelling cancels open stops; returning clears the driver and route). The job workflow's roles decide whether
 * a driver may make the move (409 INVALID_TRANSITION otherwise).
 */
export async function moveOwnJob(scope: CommandScope, jobId: string, request: TransitionRequest, notes: { cancellationNotes?: string } = {}): Promise<void> {
  const job = await ownJob(scope, jobId);
  if (!job) throw DomainError.notFound('Job', jobId);
  const applied = await applyTransition(scope, 'job', jobId, request, notes, job);
  await applyCascades(scope, applied, notes);
}
