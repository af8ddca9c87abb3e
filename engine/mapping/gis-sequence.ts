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
  const schedule = layOut(ordered.order, input, ordered.matrix, ordered.relaxed);
  return {
    provider: ordered.matrix.answered_by?.provider ?? provider.name,
    ...schedule,
    infeasibleIds: schedule.waypoints.filter((w) => !w.feasible).map((w) => w.id),
    optimized: ordered.optimized,
    notes: ordered.notes,
  };
}

/**
 * Matrix rows/columns: 0 is the start, 1..n the waypoints in input order, n + 1 the end. A `relaxed` waypoint (its
 * windows could not be met with the others') is served on arrival: the order was chosen for it without its windows,
 * so waiting there for a window would make the waypoints after it late, which the order was chosen to avoid.
 */
function layOut(order: number[], input: SequenceInput, matrix: DistanceMatrix, relaxed: Set<number>) {
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
    const fit = relaxed.has(index) ? fitOnArrival(waypoint.windows, arrival) : fitWindow(waypoint.windows, arrival);
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
      feasible: fit.reason === null,
      lateBySeconds: fit.lateBy,
      infeasibleReason: fit.reason,
    };
  });
  const lastLeg = matrix.durations_seconds[at]![endNode]!;
  distanceMeters += matrix.distances_meters[at]![endNode]!;
  travelSeconds += lastLeg;
  const serviceSeconds = input.waypoints.reduce((sum, w) => sum + w.serviceSeconds, 0);
  return { waypoints, endArrival: new Date(clock + lastLeg * 1000), distanceMeters, travelSeconds, serviceSeconds, waitSeconds };
}

type WindowFit = { window: AbsoluteWindow | null; lateBy: number; reason: string | null };

/** The first window still open at `arrival` (windows are sorted and disjoint), or how late the vehicle is. */
function fitWindow(windows: AbsoluteWindow[], arrival: number): WindowFit {
  if (windows.length === 0) return { window: null, lateBy: 0, reason: null };
  const open = windows.find((w) => w.end >= arrival);
  if (open) return { window: open, lateBy: 0, reason: null };
  return late(windows, arrival);
}

/** A relaxed waypoint, served on arrival: in the window open then, or outside its windows, early or late. */
function fitOnArrival(windows: AbsoluteWindow[], arrival: number): WindowFit {
  const open = windows.find((w) => w.start <= arrival && arrival <= w.end);
  if (open) return { window: open, lateBy: 0, reason: null };
  const next = windows.find((w) => w.start > arrival);
  if (!next) return late(windows, arrival);
  const early = Math.ceil((next.start - arrival) / 1000);
  return {
    window: null,
    lateBy: 0,
    reason: `its windows cannot be met with the other waypoints': served on arrival, ${early} s before its window opens at ${new Date(next.start).toISOString()}`,
  };
}

function late(windows: AbsoluteWindow[], arrival: number): WindowFit {
  const lastEnd = windows.at(-1)!.end;
  const lateBy = Math.ceil((arrival - lastEnd) / 1000);
  return { window: null, lateBy, reason: `arrives ${lateBy} s after its last window closed at ${new Date(lastEnd).toISOString()}` };
}
