import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { assignJob, type Assigned } from './assign-job.ts';
import { advanceCursor, decide } from './decide.ts';
import type { DispatchDeps } from './dispatch-deps.ts';
import type { DispatchMethod, Strategy } from './dispatch-types.ts';
import { indexedDriverFacts } from './driver-index.ts';
import { assertDispatchableZone, toJobTarget } from './job-target.ts';

export type StrategyInput = {
  jobId: string;
  strategy: Strategy;
  method: DispatchMethod;
  teamId?: string | null;
  routeId?: string | null;
  vehicleId?: string | null;
  requireConfirmation: boolean;
  dispatchId?: string;
};

/**
 * Lets a strategy pick the driver of a job and dispatches it to them, in the caller's command: the decision (with
 * its explanation), the round-robin cursor and the assignment commit together, so a crash never advances the cursor
 * without the dispatch nor the reverse.
 * @throws DomainError 409 JOB_NOT_UNASSIGNED, 422 ZONE_RESTRICTED, 422 NO_ELIGIBLE_DRIVER (with the decision in
 *   `details`), and the errors of `assignJob`
 */
export async function dispatchByStrategy(deps: DispatchDeps, scope: CommandScope, input: StrategyInput): Promise<Assigned> {
  // The job and the drivers in one round trip.
  const indexed = await indexedDriverFacts(scope.em, scope.siteId, { teamId: input.teamId ?? undefined, jobId: input.jobId });
  const job = toJobTarget(indexed.jobRows, input.jobId);
  if (job.phase !== 'unassigned') {
    throw new DomainError(409, 'JOB_NOT_UNASSIGNED', `Job ${job.id} is ${job.phase}; only unassigned jobs are dispatched (return it first)`, 'job_id');
  }
  await assertDispatchableZone(scope.em, job);
  const { decision, winner, cursorKey, timezone } = await decide(scope.em, scope.siteId, {
    indexed,
    job,
    strategy: input.strategy,
    teamId: input.teamId ?? undefined,
    now: scope.clock.now(),
    mapping: deps.mappingFor(scope.siteId),
    requireVehicle: !input.vehicleId,
  });
  if (!winner) {
    throw new DomainError(422, 'NO_ELIGIBLE_DRIVER', `No driver can take job ${job.id} now (${decision.considered} considered)`, 'job_id', { decision });
  }
  if (input.strategy === 'round-robin') await advanceCursor(scope.em, scope.siteId, cursorKey, winner.userId);
  return assignJob(scope, {
    jobId: job.id,
    driverId: winner.userId,
    vehicleId: input.vehicleId,
    routeId: input.routeId,
    teamId: input.teamId,
    method: input.method,
    requireConfirmation: input.requireConfirmation,
    decision,
    dispatchId: input.dispatchId,
    loaded: { job, driver: winner, timezone, routeWorkflowId: indexed.routeWorkflowId },
  });
}
