import { sequenceWaypoints, type SequenceWaypoint } from '../optimization/sequence-waypoints.ts';
import type { AbsoluteWindow } from './access-window.ts';
import type { DistanceMatrix, LatLng, MappingProvider, TransportMode } from './mapping-provider.ts';

export type OrderVisit = { point: LatLng; serviceSeconds: number; windows: AbsoluteWindow[] };

export type OrderWaypointsInput = {
  start: LatLng;
  end: LatLng;
  visits: OrderVisit[];
  mode: TransportMode;
  objective: 'duration' | 'distance';
  departure: Date;
};

export type WaypointOrder = {
  /** Indexes into `visits`, in visiting order; every visit appears exactly once. */
  order: number[];
  optimized: boolean;
  /** The provider's matrix over [start, ...visits, end], for laying out the schedule without asking twice. */
  matrix: DistanceMatrix;
  notes: string[];
  /** Visits whose windows could not be met with the others': placed with their windows lifted, served on arrival. */
  relaxed: Set<number>;
};

/**
 * Small requests answer fast; the optimizer's default second is kept for large ones (plus half of it when some
 * windows cannot be met). A fixed seed: the same request gives the same order unless a starved machine lets the
 * search run fewer iterations within the budget.
 */
const budgetFor = (visits: number) => Math.min(1_000, 100 + 10 * visits);
const SEED = 1;

/**
 * The visiting order of one vehicle's waypoints between a fixed start and end: the provider's matrix and the
 * optimizer's `sequenceWaypoints`. Every visit is in the answer. Visits whose windows cannot be met are placed by a
 * second pass with their windows lifted (so they sit where they cost least instead of at the end), and the
 * caller's schedule then reports them late.
 *
 * @throws whatever the provider's `matrix` throws (422 MATRIX_TOO_LARGE / NO_ROUTE, 502 MAPPING_PROVIDER_ERROR)
 */
export async function orderWaypoints(provider: MappingProvider, input: OrderWaypointsInput): Promise<WaypointOrder> {
  const points = [input.start, ...input.visits.map((v) => v.point), input.end];
  const matrix = await provider.matrix(points, points, input.mode);
  const notes = matrix.answered_by ? [`matrix answered by ${matrix.answered_by.provider}: ${matrix.answered_by.fallback_reason}`] : [];
  const budget = budgetFor(input.visits.length);
  const solve = (relaxed: Set<string>, timeBudgetMs: number) =>
    sequenceWaypoints({
      matrix,
      waypoints: input.visits.map((visit, i): SequenceWaypoint => ({
        id: String(i),
        service_time: visit.serviceSeconds,
        access_windows: relaxed.has(String(i)) ? [] : visit.windows.map((w) => ({ from: new Date(w.start), to: new Date(w.end) })),
      })),
      has_end: true,
      departure_time: input.departure,
      optimize_for: input.objective === 'distance' ? 'distance' : 'time',
      time_budget_ms: timeBudgetMs,
      seed: SEED,
    });
  let result = solve(new Set(), budget);
  const relaxed = new Set(result.infeasible.map((v) => v.id));
  if (relaxed.size) {
    // A fresh search; the leftovers now have no windows and fit anywhere, so half the budget is enough.
    result = solve(relaxed, Math.ceil(budget / 2));
  }
  const order = result.order.map(Number);
  // Belt and braces: nothing may go missing, even if the relaxed pass still left a visit out.
  const placed = new Set(order);
  input.visits.forEach((_, i) => placed.has(i) || order.push(i));
  return { order, optimized: true, matrix, notes, relaxed: new Set([...relaxed].map(Number)) };
}
