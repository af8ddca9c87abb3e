import type { AbsoluteWindow } from './access-window.ts';
import type { DistanceMatrix, LatLng, MappingProvider, TransportMode } from './mapping-provider.ts';
import { orderWaypoints } from './waypoint-order.ts';

export type SequenceWaypointInput = LatLng & { id: string; serviceSeconds: number; windows: AbsoluteWindow[] };

export type SequenceInput = {
  start: LatLng;
  end: LatLng;
  waypoints: SequenceWaypointInput[];
  departure: Date;
  optimizeFor: 'time' | 'distance';
  mode: TransportMode;
};

export type SequencedWaypoint = {
  id: string;
  /** 1-based position in the visiting order. */
  sequence: number;
  point: LatLng;
  arrival: Date;
  /** Arrival, or the opening of the window the vehicle waits for. */
  serviceStart: Date;
  departure: Date;
  waitSeconds: number;
  serviceSeconds: number;
  /** The window service starts in; null without windows, or when every window has closed on arrival. */
  window: AbsoluteWindow | null;
  /** False when the vehicle arrives after its last window has closed: it is served late, never left out. */
  feasible: boolean;
  lateBySeconds: number;
  infeasibleReason: string | null;
};

export type SequencePlan = {
  provider: string;
  waypoints: SequencedWaypoint[];
  endArrival: Date;
  distanceMeters: number;
  travelSeconds: number;
  serviceSeconds: number;
  waitSeconds: number;
  infeasibleIds: string[];
  optimized: boolean;
  notes: string[];
};

/**
 * The best order of one vehicle's waypoints from `start` to `end` (`POST /gis/sequence`) and its schedule: the
 * provider's matrix, the optimizer's order, then each waypoint's arrival, wait for its window, service and
 * departure. A waypoint whose windows cannot be met is still in the answer, marked infeasible with how late it is.
 *
 * @throws whatever the provider's `matrix` throws (422 MATRIX_TOO_LARGE / NO_ROUTE, 502 MAPPING_PROVIDER_ERROR)
 */
export async function sequenceRoute(provider: MappingProvider, input: SequenceInput): Promise<SequencePlan> {
  const ordered = await orderWaypoints(provider, {
    start: input.start,
    end: input.end,
    visits: input.waypoints.map((w) => ({ point: w, serviceSeconds: w.serviceSeconds, windows: w.windows })),
    mode: input.mode,
    objective: input.optimizeFor === 'distance' ? 'distance' : 'duration',
    departure: input.departure,
  });
  const schedule = layOut(ordered.order, input, ordered.matrix);
  return {
    provider: ordered.matrix.answered_by?.provider ?? provider.name,
    ...schedule,
    infeasibleIds: schedule.waypoints.filter((w) => !w.feasible).map((w) => w.id),
    optimized: ordered.optimized,
    notes: ordered.notes,
  };
}

/** Matrix rows/columns: 0 is the start, 1..n the waypoints in input order, n + 1 the end. */
function layOut(order: number[], input: SequenceInput, matrix: DistanceMatrix) {
  const endNode = input.waypoints.length + 1;
  let clock = input.departure.getTime();
  let at = 0;
  let distanceMeters = 0;
  let travelSeconds = 0;
  let waitSeconds = 0;
  const waypoints: SequencedWaypoint[] = order.map((index, position) => {
    const waypoint = input.waypoints[index]!;
    const node = index + 1;
    const travel = matrix.durations_seconds[at]![node]!;
    distanceMeters += matrix.distances_meters[at]![node]!;
    travelSeconds += travel;
    const arrival = clock + travel * 1000;
    const fit = fitWindow(waypoint.windows, arrival);
    const serviceStart = Math.max(arrival, fit.window?.start ?? arrival);
    const wait = Math.round((serviceStart - arrival) / 1000);
    waitSeconds += wait;
    clock = serviceStart + waypoint.serviceSeconds * 1000;
    at = node;
    return {
      id: waypoint.id,
      sequence: position + 1,
      point: { lat: waypoint.lat, lng: waypoint.lng },
      arrival: new Date(arrival),
      serviceStart: new Date(serviceStart),
      departure: new Date(clock),
      waitSeconds: wait,
      serviceSeconds: waypoint.serviceSeconds,
      window: fit.window,
      feasible: fit.lateBy === 0,
      lateBySeconds: fit.lateBy,
      infeasibleReason: fit.lateBy === 0 ? null : `arrives ${fit.lateBy} s after its last window closed at ${new Date(fit.lastEnd).toISOString()}`,
    };
  });
  const lastLeg = matrix.durations_seconds[at]![endNode]!;
  distanceMeters += matrix.distances_meters[at]![endNode]!;
  travelSeconds += lastLeg;
  const serviceSeconds = input.waypoints.reduce((sum, w) => sum + w.serviceSeconds, 0);
  return { waypoints, endArrival: new Date(clock + lastLeg * 1000), distanceMeters, travelSeconds, serviceSeconds, waitSeconds };
}

/** The first window still open at `arrival` (windows are sorted and disjoint), or how late the vehicle is. */
function fitWindow(windows: AbsoluteWindow[], arrival: number): { window: AbsoluteWindow | null; lateBy: number; lastEnd: number } {
  if (windows.length === 0) return { window: null, lateBy: 0, lastEnd: 0 };
  const open = windows.find((w) => w.end >= arrival);
  if (open) return { window: open, lateBy: 0, lastEnd: open.end };
  const lastEnd = windows.at(-1)!.end;
  return { window: null, lateBy: Math.ceil((arrival - lastEnd) / 1000), lastEnd };
}
