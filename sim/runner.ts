import { answerOffer, dispatch, jobCreated } from './dispatch-flow.ts';
import { arrive, claim, followTrack, lingerOrLeave, poolLook, serviceDone, shiftEnd, shiftStart } from './driver-behaviour.ts';
import { summarize, type StrategyResult } from './metrics.ts';
import type { Plan } from './plan.ts';
import type { Recorder } from './recording.ts';
import { createRunContext, type RunContext, type Timeline } from './run-context.ts';
import type { SiteFleet } from './setup-fleet.ts';
import type { SiteApi } from './site-api.ts';
import type { StrategyAdapter } from './strategies.ts';
import { newDriverState, newJobState, type JobState, type SimEvent } from './world.ts';

export type RunInput = {
  plan: Plan;
  api: SiteApi;
  fleet: SiteFleet;
  strategy: StrategyAdapter;
  timeline: Timeline;
  recorder?: Recorder | null;
  /** Called after each job creation, in the office's chain (in process: sim/planner-upkeep.ts). */
  afterJobCreated?: (() => Promise<void>) | null;
  /** In process: a job's creation may run while the job created before it is dispatched (`RunContext.createdAfter`). */
  createJobsAhead?: boolean;
  /** Called now and then with the share of the day done (0..1). */
  onProgress?: (done: number) => void;
};

/** Work left after the day plus this long is reported as not completed instead of running forever. */
const DRAIN_LIMIT_S = 86_400;

/**
 * Runs one strategy over the plan as a discrete-event simulation: the agenda holds shift starts and ends, job
 * arrivals, arrivals at stops and the ends of service; each event is handled in (time, order). Its REST calls queue
 * per driver (and the office's job creations on their own chain) and may overlap later events, but touch rows nothing
 * reads before the next decision, which waits for all of them (`flush`): so a run is a pure function of the plan,
 * the strategy and the engine.
 */
export async function runStrategy(input: RunInput): Promise<StrategyResult> {
  const drivers = input.plan.drivers.map((plan, i) => newDriverState(plan, input.fleet.members[i]!));
  const jobs = input.plan.jobs.map(newJobState);
  const createdAfter = input.createJobsAhead ? creationSuccessors(jobs) : null;
  const run = createRunContext({ plan: input.plan, api: input.api, fleet: input.fleet, strategy: input.strategy, timeline: input.timeline, recorder: input.recorder ?? null, afterJobCreated: input.afterJobCreated ?? null, createdAfter, drivers, jobs });
  for (const driver of drivers) {
    run.schedule(driver.plan.shiftStart, { type: 'shift_start', driver });
    run.schedule(driver.plan.shiftEnd, { type: 'shift_end', driver });
  }
  for (const job of jobs) run.schedule(job.plan.createdAt, { type: 'job_created', job });
  for (const driver of drivers) {
    for (const [t, lat, lng] of input.plan.tracks?.[driver.plan.name] ?? []) run.schedule(t, { type: 'track_point', driver, point: { lat, lng } });
  }
  const horizon = input.plan.scenario.day.duration_s + DRAIN_LIMIT_S;
  let handled = 0;
  for (let next = run.queue.pop(); next && next.at <= horizon; next = run.queue.pop()) {
    // A decision sees every earlier driver call committed: the same database state as a one-at-a-time run.
    if (DECISIONS.has(next.value.type)) await run.flush();
    run.now = next.at;
    await run.timeline.advanceTo(next.at);
    await handle(run, next.value);
    handled += 1;
    if (handled % 500 === 0) input.onProgress?.(Math.min(1, run.now / input.plan.scenario.day.duration_s));
  }
  await run.flush();
  input.onProgress?.(1);
  closeIntervals(run);
  return summarize(run);
}

/**
 * Events whose outcome depends on the engine's view of everyone (dispatch, the pool, claims). A new job's creation
 * overlaps the drivers' calls and waits for them only before its dispatch (`jobCreated`).
 */
const DECISIONS = new Set<SimEvent['type']>(['dispatch', 'pool_look', 'claim']);

function handle(run: RunContext, event: SimEvent): Promise<void> | void {
  switch (event.type) {
    case 'shift_start':
      return shiftStart(run, event.driver);
    case 'shift_end':
      return shiftEnd(run, event.driver);
    case 'job_created':
      return jobCreated(run, event.job);
    case 'dispatch':
      return event.job.nextDispatch?.token === event.token ? dispatch(run, event.job) : undefined;
    case 'offer':
      return answerOffer(run, event.driver, event.job);
    case 'arrive':
      return arrive(run, event.driver);
    case 'service_done':
      return serviceDone(run, event.driver);
    case 'pool_look':
      return poolLook(run, event.driver);
    case 'claim':
      return claim(run, event.driver, event.job);
    case 'linger':
      return lingerOrLeave(run, event.driver);
    case 'track_point':
      return followTrack(run, event.driver, event.point);
  }
}

/** Each job's successor in creation order: the order of their `job_created` events (time, then plan order). */
function creationSuccessors(jobs: JobState[]): Map<JobState, JobState> {
  const order = jobs.toSorted((a, b) => a.plan.createdAt - b.plan.createdAt);
  return new Map(order.slice(1).map((job, i) => [order[i]!, job]));
}

/** Drivers still at work when the run stops: their open intervals end now. */
function closeIntervals(run: RunContext): void {
  for (const driver of run.drivers) {
    if (driver.busySince !== null) driver.busyIntervals.push([driver.busySince, run.now]);
    if (driver.onlineSince !== null) driver.onlineIntervals.push([driver.onlineSince, run.now]);
    driver.busySince = null;
    driver.onlineSince = null;
  }
}
