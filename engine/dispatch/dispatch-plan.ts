import type { CommandScope } from '../commands/apply-transition.ts';
import { workflowById } from '../workflow/workflow.service.ts';
import { planDispatchMove, type PlannedMove } from './dispatch-moves.ts';
import type { JobTarget, StopState } from './job-target.ts';

/** A job's dispatch worked out from the rows the decision read: its own move and its pending stops'. */
export type JobDispatchPlan = { job: JobTarget; move: PlannedMove; stops: { stop: StopState; move: PlannedMove }[] };

/**
 * The job's `dispatch` move (as the caller) and its unassigned stops' (as the system: the cascade rule), planned
 * from the workflow states read with the job. Null when they cannot be planned from those rows alone: no states
 * read, a job already on a route (it would leave that one first), a workflow that refuses the job's move (the
 * step-by-step path then answers the refusal) or whose moves need a fact from the database.
 */
export async function planJobDispatch(scope: CommandScope, job: JobTarget): Promise<JobDispatchPlan | null> {
  const states = job.states;
  if (!states || job.routeId !== null || job.phase !== 'unassigned') return null;
  const move = planDispatchMove(await workflowById(scope.em, states.workflowId), 'job', states.state, scope.actor.role);
  if (!move) return null;
  const stops: JobDispatchPlan['stops'] = [];
  for (const stop of states.stops) {
    if (stop.phase !== 'unassigned') continue;
    const stopMove = planDispatchMove(await workflowById(scope.em, stop.workflowId), 'stop', stop.state, 'system');
    if (stopMove === undefined) return null;
    // A stop whose workflow refuses the move keeps its state (the cascade rule does not apply to it).
    if (stopMove) stops.push({ stop, move: stopMove });
  }
  return { job, move, stops };
}
