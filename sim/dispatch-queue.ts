import type { RunContext } from './run-context.ts';
import type { JobState } from './world.ts';

/** Without a freed slot, a waiting job is still tried now and then (a driver may have come back in range). */
export const SLOW_RETRY_FACTOR = 10;

export function scheduleDispatch(run: RunContext, job: JobState, at: number): void {
  const token = (job.nextDispatch?.token ?? job.attempts * 1000) + 1;
  job.nextDispatch = { at, token };
  run.schedule(at, { type: 'dispatch', job, token });
}

/**
 * A driver freed `slots` (a job done, a shift begun): the oldest waiting jobs are dispatched now, as an office
 * watching its queue would. Pool jobs need no wake-up: free drivers look at the pool themselves.
 */
export function wakeWaiting(run: RunContext, slots: number): void {
  if (run.strategy.usesPool || run.waiting.size === 0) return;
  const due = [...run.waiting]
    .filter((job) => job.status === 'waiting' && job.nextDispatch !== null && job.nextDispatch.at > run.now)
    .sort((a, b) => a.plan.createdAt - b.plan.createdAt || (a.plan.name < b.plan.name ? -1 : 1))
    .slice(0, slots);
  for (const job of due) scheduleDispatch(run, job, run.now);
}
