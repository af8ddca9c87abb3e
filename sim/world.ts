import type { LatLng } from './geo.ts';
import type { PlannedDriver, PlannedJob } from './plan.ts';
import type { FleetMember } from './setup-fleet.ts';

/** One stop a driver will drive to and work. */
export type Visit = { job: JobState; stop: 'pickup' | 'dropoff'; point: LatLng; serviceS: number };

/** What the simulator knows about a driver: the model of the person, not the server's view of them. */
export type DriverState = {
  plan: PlannedDriver;
  member: FleetMember;
  position: LatLng;
  online: boolean;
  shiftOver: boolean;
  queue: Visit[];
  /** The leg being driven, or the stop being worked. */
  current: { visit: Visit; from: LatLng; departedAt: number; arriveAt: number; meters: number } | null;
  /** Seconds in which the driver had work (driving to or at a stop); intervals for the utilisation chart. */
  busyIntervals: [number, number][];
  onlineIntervals: [number, number][];
  busySince: number | null;
  onlineSince: number | null;
  meters: number;
  earningsCents: number;
  jobsDone: number;
  /** Points the driver passed, [t, lat, lng]: the route map and the recorded trace. */
  trace: [number, number, number][];
};

export type JobState = {
  plan: PlannedJob;
  /** Its `POST /job` is queued on the office's chain (at its creation, or ahead of it: `RunContext.createdAfter`). */
  creationQueued: boolean;
  id: string | null;
  stopIds: [string, string] | null;
  attempts: number;
  declines: number;
  /** The next dispatch attempt: its event carries this token, so a rescheduled attempt voids the older one. */
  nextDispatch: { at: number; token: number } | null;
  lastFailure: string | null;
  /** Refused for a reason no freed slot changes (outside every zone, ...): it waits for its slow retry, not a slot. */
  slowRetry: boolean;
  /** Dispatch record of the current offer or pool post (for accept and claim). */
  dispatchId: string | null;
  driver: DriverState | null;
  status: 'new' | 'waiting' | 'offered' | 'pooled' | 'assigned' | 'done' | 'abandoned';
  abandonReason: string | null;
  assignedAt: number | null;
  pickupArrivedAt: number | null;
  /** When the driver began working each stop: on arrival, or at the stop's ready time when early (Li & Lim). */
  pickupStartedAt: number | null;
  dropoffStartedAt: number | null;
  deliveredAt: number | null;
  meters: number;
};

/** An assignment as the engine decided it, in sim names: the unit the "same decisions" check compares. */
export type Assignment = { t: number; job: string; driver: string; via: 'dispatch' | 'claim'; accepted: boolean };

export type SimEvent =
  | { type: 'shift_start'; driver: DriverState }
  | { type: 'shift_end'; driver: DriverState }
  | { type: 'job_created'; job: JobState }
  | { type: 'dispatch'; job: JobState; token: number }
  | { type: 'offer'; driver: DriverState; job: JobState }
  | { type: 'arrive'; driver: DriverState }
  | { type: 'service_done'; driver: DriverState }
  | { type: 'pool_look'; driver: DriverState }
  | { type: 'claim'; driver: DriverState; job: JobState }
  | { type: 'linger'; driver: DriverState }
  | { type: 'track_point'; driver: DriverState; point: { lat: number; lng: number } };

export function newDriverState(plan: PlannedDriver, member: FleetMember): DriverState {
  return {
    plan,
    member,
    position: plan.start,
    online: false,
    shiftOver: false,
    queue: [],
    current: null,
    busyIntervals: [],
    onlineIntervals: [],
    busySince: null,
    onlineSince: null,
    meters: 0,
    earningsCents: 0,
    jobsDone: 0,
    trace: [],
  };
}

export function newJobState(plan: PlannedJob): JobState {
  return {
    plan,
    creationQueued: false,
    id: null,
    stopIds: null,
    attempts: 0,
    declines: 0,
    nextDispatch: null,
    lastFailure: null,
    slowRetry: false,
    dispatchId: null,
    driver: null,
    status: 'new',
    abandonReason: null,
    assignedAt: null,
    pickupArrivedAt: null,
    pickupStartedAt: null,
    dropoffStartedAt: null,
    deliveredAt: null,
    meters: 0,
  };
}

export const isIdle = (driver: DriverState): boolean => driver.current === null && driver.queue.length === 0;
