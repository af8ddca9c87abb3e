import { applyKnown, type CommandScope } from '../commands/apply-transition.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { JOB, readStopMove, ROUTE, STOPS, writtenJob } from '../commands/move-reads.ts';
import { DomainError } from '../domain-error.ts';
import type { AnswerAtCommit } from '../runtime/answer-at-commit.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { detailFromRows, jobDetailAtCommit } from './job-detail-row.ts';
import { jobFromRow, type JobData, type StopRecord } from './job-view.ts';

/**
 * Moves a stop of one of the calling driver's jobs; the job follows by the cascade rules (all stops done completes
 * it), and its route by theirs. Run it under the stop's mailbox key, as POST /stop/state does, so both paths queue
 * behind each other.
 *
 * Everything the move and its cascades read comes in one statement of the command's transaction (`readStopMove`):
 * checking ownership there (not before the command) means a job reassigned meanwhile cannot be moved by its former
 * driver, and another driver's stop is 404, as on every job read. The stop is locked by that read, so its update
 * goes out with the command's next statement. The answer is built from those rows and the rows the moves wrote
 * (the stop's, the job's when the cascade moved it); only a cascade that moved anything else reads the job again,
 * with the COMMIT.
 * @returns the job as the driver sees it after the move
 * @throws DomainError 404, 400 UNKNOWN_STATE_ID, 409 INVALID_TRANSITION / JOB_NOT_DISPATCHED
 */
export async function moveDriverStop(scope: CommandScope, stopId: string, toStateId: string, notes: { cancellationNotes?: string } = {}): Promise<JobData | AnswerAtCommit<JobData>> {
  const reads = await readStopMove(scope, stopId);
  const owner = reads?.[JOB].driver_user_id ?? null;
  if (!reads || owner === null || owner !== scope.actor.userId) throw DomainError.notFound('Stop', stopId);
  // A job created for the driver but not dispatched yet is theirs to see, not to work: cancelling its stops would
  // cancel the job, which the job's own workflow does not let a driver do before dispatch.
  if (reads[JOB].phase === 'unassigned') {
    throw DomainError.conflict('JOB_NOT_DISPATCHED', `Job ${String(reads[JOB].id)} is not dispatched yet: its stops move once it is dispatched to you`);
  }
  const applied = await applyKnown(scope, 'stop', reads, { kind: 'move', toStateId }, notes, true);
  await applyCascades(scope, applied, notes);
  const job = jobFromRow(reads[JOB]);
  const answerKnown = [...scope.touched.keys()].every((id) => id === stopId || id === job.id || id === reads[ROUTE]?.id);
  if (!answerKnown) return jobDetailAtCommit(scope.siteId, scope.actor, job.id);
  return detailFromRows((id) => workflowById(scope.em, id), scope.actor, writtenJob(scope) ?? job, reads[STOPS], applied.entity as StopRecord);
}
