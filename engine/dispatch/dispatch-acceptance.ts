import { buildEntityMachine } from '../../machines/entity-machine.ts';
import { applyKnown, applyTransition, type CommandScope } from '../commands/apply-transition.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { DomainError } from '../domain-error.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { jobReadWithUpdate, updateDispatch, type DispatchRow } from './dispatch-record.ts';
import { acceptance, AWAITING_CONFIRMATION, settledJobs } from './driver-move-acceptance.ts';

/**
 * The assigned driver accepts a dispatch that required confirmation: acceptance is recorded on the dispatch
 * (driver_accepted, driver_accepted_at: spec rule 2), the record moves to `processing`, and the job takes the
 * workflow's `accept` event as the driver (audit + `job:state_change`), all in one transaction. The conditional
 * update comes first, and only a refused one reads the record, to tell 404 from 409: an accepted offer costs one
 * statement for the dispatch.
 * A job already past the accept step (its driver started it, or staff moved it on) keeps its state: the acceptance
 * is recorded without a job event. A record this driver has already accepted is answered as it is (a retried
 * accept is not an error).
 * @throws DomainError 404 (unknown, or another driver's), 409 NOT_AWAITING_CONFIRMATION / INVALID_TRANSITION,
 *   422 REQUIREMENT_NOT_MET
 */
export async function acceptDispatch(scope: CommandScope, dispatchId: string): Promise<DispatchRow> {
  const accepted = await updateDispatch(scope, dispatchId, acceptance(scope.clock.now()), `assigned_to_driver_id = ? and ${AWAITING_CONFIRMATION}`, [scope.actor.userId], 'accept', true);
  if (!accepted) return alreadyAccepted(scope, dispatchId);
  settledJobs(scope).add(accepted.job_id!);
  // The job as the dispatch's update read it: its move is built from that row and goes out with the COMMIT, its
  // version checked there (a job moved meanwhile makes the command run again).
  const jobRow = jobReadWithUpdate(accepted);
  if (jobRow && (await pastConfirmation(scope, jobRow))) return accepted;
  const move = { kind: 'phase', event: 'accept' } as const;
  const applied = jobRow ? await applyKnown(scope, 'job', jobRow, move) : await applyTransition(scope, 'job', accepted.job_id!, move);
  await applyCascades(scope, applied, {});
  return accepted;
}

/** A refused accept: this driver's record accepted already (answered as it is), else 404 or 409. */
async function alreadyAccepted(scope: CommandScope, dispatchId: string): Promise<DispatchRow> {
  const [mine] = await scope.em.execute<DispatchRow[]>('select * from dispatch where id = ? and site_id = ? and assigned_to_driver_id = ?', [dispatchId, scope.siteId, scope.actor.userId]);
  if (!mine) throw new DomainError(404, 'NOT_FOUND', `Dispatch ${dispatchId} not found`, 'dispatch_id');
  if (mine.driver_accepted && mine.is_active) return mine;
  throw new DomainError(409, 'NOT_AWAITING_CONFIRMATION', `Dispatch ${dispatchId} is not waiting for this driver's confirmation`, 'dispatch_id');
}

/**
 * Whether the job has left the step the `accept` event serves: started, or in an assigned state its workflow offers
 * no `accept` from (accepted already). A job still in that step, or one returned or ended, is not.
 */
async function pastConfirmation(scope: CommandScope, job: EntityRow): Promise<boolean> {
  if (job.phase === 'in_progress') return true;
  if (job.phase !== 'assigned') return false;
  const workflow = await workflowById(scope.em, String(job.workflow_id));
  const key = workflow.states.find((state) => state.id === job.workflow_state_id)?.key;
  const node = key === undefined ? undefined : buildEntityMachine(workflow).root.states[key];
  return node !== undefined && !node.ownEvents.includes('job.accept');
}
