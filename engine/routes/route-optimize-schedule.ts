import type { DistanceMatrix } from '../mapping/mapping-provider.ts';
import { startRow, stopWindow, type RouteLayout } from './route-optimize-plan.ts';
import type { OptimizeStop } from './route-optimize-snapshot.ts';

/** Seconds after the departure instant. */
export type ScheduledStop = { stop: OptimizeStop; arrival: number; serviceStart: number; departure: number; lateBy: number };

/**
 * A route order's figures. `duration_seconds` runs from leaving the start (the driver's position or the fixed first
 * stop) — or, with an open start, from the first service — to the end of the last service: travel, service and
 * waiting. A stop is late when its service cannot be complete by its `complete_before`.
 */
export type OrderTotals = {
  distance_meters: number;
  duration_seconds: number;
  travel_seconds: number;
  wait_seconds: number;
  late_stops: number;
  late_seconds: number;
};

/**
 * Times along `sequence` (the open stops in visiting order: the fixed first stop, if any, then the movable ones),
 * arriving early meaning waiting for `complete_after`, on the provider's matrix over the layout's points.
 */
export function scheduleOrder(layout: RouteLayout, sequence: OptimizeStop[], matrix: DistanceMatrix, departureMs: number): { stops: ScheduledStop[]; totals: OrderTotals } {
  const rows = new Map<string, number>();
  if (layout.fixedFirst) rows.set(layout.fixedFirst.id, layout.startPoint ? 1 : 0);
  const offset = (layout.startPoint ? 1 : 0) + (layout.fixedFirst ? 1 : 0);
  layout.movable.forEach((s, i) => rows.set(s.id, offset + i));
  let at = layout.startPoint ? startRow(layout) : null;
  let clock = 0;
  let distance = 0;
  let travel = 0;
  let service = 0;
  const stops = sequence.map((stop): ScheduledStop => {
    const row = rows.get(stop.id)!;
    const leg = at === null ? 0 : matrix.durations_seconds[at]![row]!;
    distance += at === null ? 0 : matrix.distances_meters[at]![row]!;
    travel += leg;
    const arrival = clock + leg;
    const window = stopWindow(stop, departureMs);
    const serviceStart = Math.max(arrival, window?.start ?? arrival);
    const lateBy = window && serviceStart > window.end ? serviceStart - window.end : 0;
    clock = serviceStart + stop.serviceSeconds;
    service += stop.serviceSeconds;
    at = row;
    return { stop, arrival, serviceStart, departure: clock, lateBy };
  });
  const begin = layout.startPoint ? 0 : (stops[0]?.serviceStart ?? 0);
  const duration = stops.length === 0 ? 0 : clock - begin;
  const late = stops.filter((s) => s.lateBy > 0);
  return {
    stops,
    totals: {
      distance_meters: Math.round(distance),
      duration_seconds: Math.round(duration),
      travel_seconds: Math.round(travel),
      wait_seconds: Math.round(duration - travel - service),
      late_stops: late.length,
      late_seconds: Math.round(late.reduce((sum, s) => sum + s.lateBy, 0)),
    },
  };
}

/**
 * Whether `after` beats `before`: fewer late stops, then fewer seconds late, then a shorter route by the chosen
 * measure. Ties keep the current order, so optimizing never makes a route worse.
 */
export function isBetter(after: OrderTotals, before: OrderTotals, optimizeFor: 'time' | 'distance'): boolean {
  if (after.late_stops !== before.late_stops) return after.late_stops < before.late_stops;
  if (after.late_seconds !== before.late_seconds) return after.late_seconds < before.late_seconds;
  const measure = (t: OrderTotals) => (optimizeFor === 'distance' ? t.distance_meters : t.duration_seconds);
  return measure(after) < measure(before);
}
