import type { DistanceMatrix } from '../mapping/mapping-provider.ts';
import { DomainError } from '../domain-error.ts';
import type { RoutingJob, TimeWindow, UnassignedReason } from './routing-problem.ts';
import { solveRoutes } from './solve-routes.ts';

/** One waypoint of the spec's "Waypoint sequence request" (its lat/lng already turned into matrix rows). */
export type SequenceWaypoint = {
  id: string;
  /** Seconds spent there; default 0. */
  service_time?: number;
  /** Service must start inside one of these (`parseAccessWindow` in engine/mapping/access-window.ts reads the spec's string); omitted or empty: any time. */
  access_windows?: { from: Date; to: Date }[];
};

export type WaypointSequenceInput = {
  /**
   * Travel between the points in this order: the start, then the waypoints, then the end when `has_end`
   * (otherwise the route stops at its last waypoint). From the site's MappingProvider `matrix()`.
   */
  matrix: DistanceMatrix;
  waypoints: SequenceWaypoint[];
  has_end: boolean;
  departure_time: Date;
  /** `time`: arrive at the end (or finish the last waypoint) as early as possible; `distance`: shortest. */
  optimize_for: 'time' | 'distance';
  /** Default 1000 ms. */
  time_budget_ms?: number;
  seed?: number;
};

export type SequencedStop = {
  id: string;
  arrival_at: Date;
  /** Later than the arrival when waiting for an access window to open. */
  service_start_at: Date;
  departure_at: Date;
};

export type WaypointSequenceResult = {
  /** Waypoint ids in visiting order (the infeasible ones are not in it). */
  order: string[];
  stops: SequencedStop[];
  distance_meters: number;
  /** Departure to arrival at the end (or the last departure): driving, service and waiting. */
  duration_seconds: number;
  arrival_at: Date;
  /** Waypoints that cannot be served inside their windows, each with why: reported, never dropped silently. */
  infeasible: { id: string; reason: UnassignedReason; detail: string }[];
};

const DEFAULT_BUDGET_MS = 1_000;

/**
 * The best order for one vehicle from its start to its end: the same optimizer as multi-vehicle routing, with a
 * fleet of one, no capacity, times in seconds after `departure_time`.
 * @throws DomainError 400 INVALID_ROUTING_PROBLEM when the matrix does not match the waypoints, or on bad windows
 */
export function sequenceWaypoints(input: WaypointSequenceInput): WaypointSequenceResult {
  const { waypoints, departure_time: departure } = input;
  const expected = waypoints.length + 1 + (input.has_end ? 1 : 0);
  if (input.matrix.distances_meters.length !== expected) {
    throw DomainError.invalid('INVALID_ROUTING_PROBLEM', `the matrix must have ${expected} rows: start, waypoints${input.has_end ? ', end' : ''}`, 'matrix');
  }
  const secondsAfterDeparture = (date: Date) => (date.getTime() - departure.getTime()) / 1000;
  const jobs: RoutingJob[] = waypoints.map((waypoint, i) => ({
    id: waypoint.id,
    type: 'visit',
    stop: {
      location: i + 1,
      serviceSeconds: waypoint.service_time ?? 0,
      timeWindows: waypoint.access_windows?.map((w): TimeWindow => ({ start: secondsAfterDeparture(w.from), end: secondsAfterDeparture(w.to) })),
    },
  }));
  const solution = solveRoutes(
    {
      matrix: input.matrix,
      vehicles: [{ id: 'vehicle', shift: { start: 0, end: Infinity }, startLocation: 0, endLocation: input.has_end ? expected - 1 : undefined }],
      jobs,
      objective: input.optimize_for === 'time' ? 'duration' : 'distance',
    },
    { timeBudgetMs: input.time_budget_ms ?? DEFAULT_BUDGET_MS, seed: input.seed },
  );
  const at = (seconds: number) => new Date(departure.getTime() + seconds * 1000);
  const route = solution.routes[0];
  const stops = (route?.stops ?? []).map((stop) => ({
    id: stop.jobId,
    arrival_at: at(stop.arrival),
    service_start_at: at(stop.serviceStart),
    departure_at: at(stop.departure),
  }));
  return {
    order: stops.map((stop) => stop.id),
    stops,
    distance_meters: solution.distance,
    duration_seconds: route ? route.arrival : 0,
    arrival_at: at(route ? route.arrival : 0),
    infeasible: solution.unassigned.map(({ jobId, reason, detail }) => ({ id: jobId, reason, detail })),
  };
}

