import type { Applied, CommandScope } from '../commands/apply-transition.ts';
import { knownAwaitingConfirmation } from '../commands/move-reads.ts';
import type { JobRecord } from '../jobs/job-view.ts';
import { recordUpdatedDispatch, type UpdatedDispatchRow } from './dispatch-record.ts';

/** A dispatch record still waiting for its driver's confirmation (unqualified columns of `dispatch`). */
export const AWAITING_CONFIRMATION = "status = 'pending' and is_active and require_confirmation and not driver_accepted and dispatched_at is not null";

/** What recording a driver's acceptance changes on the record (spec rule 2): the driver has the job. */
export const acceptance = (now: Date) => ({ status: 'processing' as const, driver_accepted: true, driver_accepted_at: now });

/**
 * A driver's own move of their job out of waiting for confirmation (accepting or starting it: `POST /job/state`, or
 * a stop move that starts the job) is their acceptance: the job's pending dispatch records it as `acceptDispatch`
 * does (audited and evented as `accept`), in the move's transaction. Left pending, the record could never be
 * accepted afterwards, and the job and its dispatch would disagree for good. Staff moving the job is not the
 * driver's acceptance (spec rule 1). A stop move's read tells whether such a record exists (no statement when none).
 */
export async function recordAcceptanceOfDriverMove(scope: CommandScope, applied: Applied): Promise<void> {
  if (applied.kind !== 'job' || applied.from.phase !== 'assigned' || applied.from.id === applied.to.id) return;
  if (applied.to.phase === 'unassigned' || applied.to.phase === 'cancelled') return;
  const job = applied.entity as JobRecord;
  const driverId = scope.actor.userId;
  if (driverId === null || job.driverUserId !== driverId) return;
  const settled = settledJobs(scope);
  if (settled.has(job.id) || knownAwaitingConfirmation(scope, job.id) === false) return;
  settled.add(job.id);
  const now = scope.clock.now();
  const [row] = await scope.em.execute<UpdatedDispatchRow[]>(
    `with prior as (select d.id as prior_id, to_jsonb(d) as before_row from dispatch d
       where d.job_id = ? and d.site_id = ? and d.assigned_to_driver_id = ? and ${AWAITING_CONFIRMATION})
     update dispatch set status = 'processing', driver_accepted = true, driver_accepted_at = ?, version = version + 1, updated_at = ? from prior
     where dispatch.id = prior.prior_id and dispatch.site_id = ? and assigned_to_driver_id = ? and (${AWAITING_CONFIRMATION})
     returning dispatch.*, prior.before_row`,
    [job.id, scope.siteId, driverId, now, new Date(), scope.siteId, driverId],
  );
  recordUpdatedDispatch(scope, 'accept', row);
}

/**
 * The jobs whose dispatch acceptance this command has settled (recorded, or looked for): a command accepts a job's
 * dispatch once. Keyed by the command's pending records, made afresh for each run of the command.
 */
const settled = new WeakMap<CommandScope['pending'], Set<string>>();
export function settledJobs(scope: CommandScope): Set<string> {
  let jobs = settled.get(scope.pending);
  if (!jobs) settled.set(scope.pending, (jobs = new Set()));
  return jobs;
}
