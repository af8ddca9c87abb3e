/**
 * The optimizer's input and output, as plain data (DESIGN §8). The optimizer knows nothing of the map: travel
 * comes in as a matrix (from a MappingProvider's `matrix()`, or `euclideanMatrix()` for the public benchmarks) and
 * every place is an index into it.
 *
 * Units: the matrix's (meters and seconds from a provider; whatever the instance uses in the benchmarks). Times
 * (windows, shifts) are seconds on one clock shared by the whole problem, e.g. seconds since the planning day's
 * midnight or since departure: the optimizer only adds and compares them.
 */
import type { DistanceMatrix } from '../mapping/mapping-provider.ts';

/** `[start, end]`, inclusive: service may begin at any moment inside it. */
export type TimeWindow = { start: number; end: number };

/** One place the vehicle must go to. */
export type RoutingStop = {
  /** Row/column of the matrix. */
  location: number;
  /** Time spent there before leaving (seconds); default 0. */
  serviceSeconds?: number;
  /**
   * Service must start inside one of these (several allowed, e.g. 9–12 or 14–17); arriving early means waiting
   * for the next window. Omitted or empty: any time.
   */
  timeWindows?: TimeWindow[];
};

/**
 * A single visit. `delivery` is loaded at the vehicle's start and dropped here; `pickup` is collected here and
 * carried to the end. Amounts have one number per capacity dimension (weight, volume, ...).
 */
export type VisitJob = { id: string; type: 'visit'; stop: RoutingStop; delivery?: number[]; pickup?: number[] };

/** A pickup and its dropoff: same vehicle, pickup first, `amount` on board in between (the courier case). */
export type ShipmentJob = { id: string; type: 'shipment'; pickup: RoutingStop; dropoff: RoutingStop; amount?: number[] };

export type RoutingJob = VisitJob | ShipmentJob;

export type RoutingVehicle = {
  id: string;
  /** Identical vehicles of this kind (a fleet limit); default 1. Unused vehicles cost nothing. */
  count?: number;
  /** Per dimension, the same order as the jobs' amounts; omitted: unlimited. */
  capacity?: number[];
  /** The vehicle leaves its start no earlier than `start` and is back at its end by `end`. Default: any time. */
  shift?: TimeWindow;
  /** Omitted: the route begins at its first stop (no travel before it). */
  startLocation?: number;
  /** Omitted: the route ends at its last stop (an open route). */
  endLocation?: number;
};

/**
 * - `distance`: total distance.
 * - `duration`: total time on the road, waiting included (each route from its shift start to its return).
 * - `vehicles-then-distance`: fewest vehicles, then distance (how the Solomon and Li & Lim best-knowns are
 *   ranked). A vehicle is worth more than any distance, so a route is only added when nothing else fits.
 */
export type RoutingObjective = 'distance' | 'duration' | 'vehicles-then-distance';

export type RoutingProblem = {
  matrix: DistanceMatrix;
  vehicles: RoutingVehicle[];
  jobs: RoutingJob[];
  objective: RoutingObjective;
};

export type RoutingOptions = {
  /**
   * Wall-clock budget for the whole call, milliseconds: no iteration starts after 95% of it, so the answer comes
   * back within it unless one iteration runs past the rest (a few ms on 100 stops).
   */
  timeBudgetMs: number;
  /** Same seed and same iteration count → the same answer, on any machine. Default 1. */
  seed?: number;
  /**
   * Stop after this many search iterations (still bounded by the time budget). A result's `iterations` passed back
   * here with its seed replays that exact result.
   */
  iterations?: number;
};

export type PlannedStopKind = 'visit' | 'pickup' | 'dropoff';

export type PlannedStop = {
  jobId: string;
  kind: PlannedStopKind;
  location: number;
  arrival: number;
  /** Service start: the arrival, or later when waiting for a window to open. */
  serviceStart: number;
  departure: number;
  /** On board when leaving, per dimension. */
  load: number[];
};

export type PlannedRoute = {
  vehicleId: string;
  /** Which of the `count` identical vehicles (0-based), so two routes never share a vehicle. */
  vehicleIndex: number;
  stops: PlannedStop[];
  departure: number;
  /** Arrival at the end location (or the end of the last service for an open route). */
  arrival: number;
  distance: number;
  /** `arrival - departure`: driving, service and waiting. */
  duration: number;
};

/**
 * Why a job is left out. `capacity`: bigger than every vehicle. `time_window`: no vehicle can reach it (or its
 * dropoff, or get back) inside the windows and shift even on an empty route. `fleet_exhausted`: it would fit on
 * its own, but not beside the jobs that were placed.
 */
export type UnassignedReason = 'capacity' | 'time_window' | 'fleet_exhausted';

export type UnassignedJob = { jobId: string; reason: UnassignedReason; detail: string };

export type RoutingSolution = {
  routes: PlannedRoute[];
  /** Every job is either on a route or here, never silently dropped. */
  unassigned: UnassignedJob[];
  vehiclesUsed: number;
  distance: number;
  duration: number;
  /** The objective's value (vehicles-then-distance reports the distance; see `vehiclesUsed`). */
  cost: number;
  /** Search iterations that the answer comes from (pass back as `iterations` to replay it). */
  iterations: number;
  seed: number;
  elapsedMs: number;
};
