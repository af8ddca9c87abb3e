import { describe, expect, it } from 'vitest';
import { abandonStranded, queueAhead, waitsForFreeSlot, wakeWaiting } from '../../sim/dispatch-queue.ts';
import { planFor } from '../../sim/scenario-loader.ts';
import { createRunContext, type RunContext } from '../../sim/run-context.ts';
import type { SiteFleet } from '../../sim/setup-fleet.ts';
import type { SiteApi } from '../../sim/site-api.ts';
import { noneReason, strategyAdapter, type StrategyName } from '../../sim/strategies.ts';
import { SimApiError } from '../../sim/site-api.ts';
import { newDriverState, newJobState, type JobState } from '../../sim/world.ts';

/**
 * The office's queue on its own: which waiting jobs a freed slot wakes, when a new job queues behind them, and what
 * happens to them when the last driver goes home. No engine: these decide only when the engine is asked.
 */
function runAt(now: number, strategy: StrategyName = 'team-eta'): RunContext {
  const plan = planFor('test-small', 42, { jobs: 6 });
  const fleet = { members: plan.drivers.map((d) => ({ name: d.name, userId: d.name })) } as unknown as SiteFleet;
  const drivers = plan.drivers.map((d, i) => newDriverState(d, fleet.members[i]!));
  const run = createRunContext({ plan, api: null as unknown as SiteApi, fleet, strategy: strategyAdapter(strategy), timeline: null as never, recorder: null, createdAfter: null, drivers, jobs: plan.jobs.map(newJobState) });
  run.now = now;
  return run;
}

/** A job in the queue: `retryAt` null waits for a slot, a time is a retry already scheduled. */
function waiting(run: RunContext, index: number, retryAt: number | null): JobState {
  const job = run.jobs[index]!;
  job.status = 'waiting';
  job.nextDispatch = retryAt === null ? null : { at: retryAt, token: 1 };
  run.waiting.add(job);
  return job;
}

/** The engine's refusal of a dispatch that left every driver out, counted by reason. */
const refused = (excluded: Record<string, number>) => new SimApiError(422, 'NO_ELIGIBLE_DRIVER', 'no driver', { decision: { excluded_by_reason: excluded } });

const due = (run: RunContext) => run.jobs.filter((j) => j.nextDispatch?.at === run.now).map((j) => j.plan.name);

describe("the simulated office's queue of jobs waiting for a free driver", () => {
  it('a freed slot wakes the oldest waiting jobs, one per slot, passing over the job just given back', () => {
    const run = runAt(5000);
    // b was just given back: its own retry is scheduled (as a return schedules it), and it is the oldest.
    const [a, b, c] = [waiting(run, 2, null), waiting(run, 0, 5030), waiting(run, 1, null)];
    wakeWaiting(run, 1, b);
    expect(due(run)).toEqual([c.plan.name]);
    wakeWaiting(run, 2);
    expect(due(run).sort()).toEqual([b.plan.name, c.plan.name, a.plan.name].sort());
    expect(run.queue.size).toBe(3);
  });

  it('a new job queues behind jobs waiting for a slot or woken for one, not behind a returned job backing off', () => {
    const run = runAt(5000);
    const fresh = waiting(run, 5, null);
    waiting(run, 1, 5030);
    expect(queueAhead(run, fresh)).toBe(false);
    waiting(run, 0, 5000);
    expect(queueAhead(run, fresh)).toBe(true);
    // With the pool, drivers look at the pool themselves: nothing queues, whatever waits.
    const pool = runAt(5000, 'pool');
    waiting(pool, 0, null);
    waiting(pool, 1, 5000);
    expect(queueAhead(pool, waiting(pool, 5, null))).toBe(false);
  });

  it('when the last driver goes home with no shift ahead, jobs waiting for a slot are abandoned with their reason', () => {
    const run = runAt(9000);
    const parked = waiting(run, 0, null);
    parked.lastFailure = 'no driver found (NO_ELIGIBLE_DRIVER)';
    const retrying = waiting(run, 1, 9030);
    run.drivers[0]!.online = true;
    abandonStranded(run);
    expect(parked.status).toBe('waiting');
    run.drivers[0]!.online = false;
    abandonStranded(run);
    expect(parked).toMatchObject({ status: 'abandoned', abandonReason: 'no driver found (NO_ELIGIBLE_DRIVER); no driver is on shift any more' });
    expect(run.waiting.has(parked)).toBe(false);
    // A job with a retry scheduled is abandoned by that retry, with the engine's answer.
    expect(retrying.status).toBe('waiting');
  });

  it('waits for a freed slot only when drivers were left out for what a slot changes, not for being outside the zone', () => {
    const run = runAt(5000, 'zone-based');
    expect(waitsForFreeSlot(run, noneReason(refused({ capacity: 3, not_available: 2 })))).toBe(true);
    const outside = noneReason(refused({ outside_zone: 5, capacity: 1 }));
    expect(outside).toBe('NO_ELIGIBLE_DRIVER:outside_zone');
    expect(waitsForFreeSlot(run, outside)).toBe(false);
  });

  it('a freed slot passes over a job on a slow retry (refused for a reason a slot does not change) to the one waiting for a slot', () => {
    const run = runAt(5000, 'zone-based');
    const outside = waiting(run, 0, 5300);
    outside.slowRetry = true;
    const behind = waiting(run, 1, null);
    wakeWaiting(run, 1);
    expect(due(run)).toEqual([behind.plan.name]);
  });
});
