import { EventQueue } from './event-queue.ts';
import type { LatLng } from './geo.ts';
import type { Plan } from './plan.ts';
import type { Recorder } from './recording.ts';
import type { FleetMember, SiteFleet } from './setup-fleet.ts';
import type { SiteApi } from './site-api.ts';
import type { StrategyAdapter } from './strategies.ts';
import type { Assignment, DriverState, JobState, SimEvent } from './world.ts';

/**
 * How virtual time meets the outside world. In process: the engine's clock is set to the event's time and
 * nothing waits. Live: the run waits for the wall clock (compressed by --speed) and drivers stream positions.
 */
export type Timeline = {
  /** Seconds after the day starts; called before each event is handled, in order. */
  advanceTo(t: number): Promise<void>;
  /** RFC 3339 time of `t` as the server sees it (recorded_at of a position). */
  stamp(t: number): string;
  /** Reports where a driver is (REST in process, the driver socket live). */
  reportPosition(member: FleetMember, point: LatLng, t: number): Promise<void>;
  /** A driver sets off on a leg: live runs stream positions along it. */
  onLeg?(member: FleetMember, from: LatLng, to: LatLng, departT: number, arriveT: number): void;
};

export type RunContext = {
  plan: Plan;
  api: SiteApi;
  fleet: SiteFleet;
  strategy: StrategyAdapter;
  timeline: Timeline;
  recorder: Recorder | null;
  /** Called after each job the office created, in its chain (in process: the database's upkeep, sim/planner-upkeep.ts). */
  afterJobCreated?: (() => Promise<void>) | null;
  queue: EventQueue<SimEvent>;
  drivers: DriverState[];
  jobs: JobState[];
  byJobId: Map<string, JobState>;
  byUserId: Map<string, DriverState>;
  /**
   * In process: the job created next after each job, so that job's `POST /job` can run while this one is dispatched
   * (`jobCreated`). Null live, where a job created early would show on the dispatch board before its time.
   */
  createdAfter: Map<JobState, JobState> | null;
  /** Jobs created and not yet with a driver: lingering drivers stay while any wait. */
  waiting: Set<JobState>;
  assignments: Assignment[];
  now: number;
  schedule(at: number, event: SimEvent): void;
  /**
   * Runs a driver's REST calls after the ones already queued for that driver, without waiting: different drivers'
   * calls touch different rows and may overlap. The office's job creations queue the same way (`'office'`).
   * Decisions (dispatch, pool, claims) wait for `flush` first.
   */
  act(caller: DriverState | 'office', work: () => Promise<unknown>): void;
  /** Waits for every queued driver call; rethrows the first failure. */
  flush(): Promise<void>;
};

export function createRunContext(input: Omit<RunContext, 'queue' | 'byJobId' | 'byUserId' | 'waiting' | 'assignments' | 'now' | 'schedule' | 'act' | 'flush'>): RunContext {
  const queue = new EventQueue<SimEvent>();
  const chains = new Map<DriverState | 'office', Promise<void>>();
  const failures: unknown[] = [];
  const context: RunContext = {
    ...input,
    queue,
    byJobId: new Map(),
    byUserId: new Map(input.drivers.map((d) => [d.member.userId, d])),
    waiting: new Set(),
    assignments: [],
    now: 0,
    schedule: (at, event) => queue.push(Math.max(at, context.now), event),
    act(caller, work) {
      const previous = chains.get(caller) ?? Promise.resolve();
      chains.set(
        caller,
        previous.then(work).then(
          () => undefined,
          (error: unknown) => void failures.push(error),
        ),
      );
    },
    async flush() {
      if (chains.size > 0) await Promise.all(chains.values());
      chains.clear();
      if (failures.length > 0) throw failures[0];
    },
  };
  return context;
}
