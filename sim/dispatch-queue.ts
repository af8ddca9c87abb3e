import type { RunContext } from './run-context.ts';
import type { JobState } from './world.ts';

/** A job whose dispatch failed for another reason than a full fleet is still tried now and then. */
export const SLOW_RETRY_FACTOR = 10;

/**
 * The engine's answer when no driver of the fleet can take a job: every one is at max_load or not available. The
 * simulated workers have no schedules and the jobs no time windows, so only a freed slot (a job done, a job given
 * back for good, a shift begun) can change that answer: such a job waits for `wakeWaiting`, asking nothing meanwhile.
 */
const FLEET_FULL = 'NO_ELIGIBLE_DRIVER';

export const waitsForFreeSlot = (run: RunContext, code: string): boolean => code === FLEET_FULL && !run.strategy.usesPool;

/** Is an earlier job waiting for a free slot (or woken to take one now)? Jobs backing off after a return are not. */
export function queueAhead(run: RunContext, job: JobState): boolean {
  if (run.strategy.usesPool) return false;
  for (const other of run.waiting) {
    if (other !== job && other.status === 'waiting' && (other.nextDispatch === null || other.nextDispatch.at <= run.now)) return true;
  }
  return false;
}

export function scheduleDispatch(run: RunContext, job: JobState, at: number): void {
  const token = (job.nextDispatch?.token ?? job.attempts * 1000) + 1;
  job.nextDispatch = { at, token };
  run.schedule(at, { type: 'dispatch', job, token });
}

/**
 * A driver freed `slots`: the oldest waiting jobs not already due now are dispatched now, as an office watching its
 * queue would (`except`: the job just given back, offered again by its own retry). Pool jobs need no wake-up: free
 * drivers look at the pool themselves.
 */
export function wakeWaiting(run: RunContext, slots: number, except: JobState | null = null): void {
  if (run.strategy.usesPool || run.waiting.size === 0) return;
  for (const job of oldestWaiting(run, slots, except)) scheduleDispatch(run, job, run.now);
}

/** The `count` oldest (creation time, then name) waiting jobs without a dispatch due now: a scan per slot, not a sort. */
function oldestWaiting(run: RunContext, count: number, except: JobState | null): JobState[] {
  const chosen: JobState[] = [];
  for (let i = 0; i < count; i += 1) {
    let best: JobState | null = null;
    for (const job of run.waiting) {
      // A job on a slow retry takes no slot: a freed one does not change why it was refused (woken, it took every
      // slot and the jobs behind it, waiting for one, were never offered again).
      if (job === except || job.status !== 'waiting' || job.slowRetry || (job.nextDispatch !== null && job.nextDispatch.at <= run.now) || chosen.includes(job)) continue;
      if (!best || job.plan.createdAt < best.plan.createdAt || (job.plan.createdAt === best.plan.createdAt && job.plan.name < best.plan.name)) best = job;
    }
    if (!best) break;
    chosen.push(best);
  }
  return chosen;
}

/**
 * The last driver went home and no shift lies ahead: jobs waiting for a free slot will never get one. They are
 * abandoned now (a job with a retry still scheduled is abandoned by that retry).
 */
export function abandonStranded(run: RunContext): void {
  if (driverAhead(run)) return;
  for (const job of run.waiting) {
    if (job.status === 'waiting' && job.nextDispatch === null) abandon(run, job, `${job.lastFailure}${NO_DRIVER_LEFT}`);
  }
}

/** Is a driver on shift now, or is a shift still to begin? */
export const driverAhead = (run: RunContext): boolean => run.drivers.some((d) => d.online || run.now < d.plan.shiftStart);

export const NO_DRIVER_LEFT = '; no driver is on shift any more';

export function abandon(run: RunContext, job: JobState, reason: string): void {
  job.status = 'abandoned';
  job.abandonReason = reason;
  run.waiting.delete(job);
}
