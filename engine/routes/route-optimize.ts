import type { DistanceMatrix, MappingProvider } from '../mapping/mapping-provider.ts';
import type { RoutingOptions, RoutingProblem, RoutingSolution, UnassignedJob } from '../optimization/routing-problem.ts';
import { solveInWorker } from '../optimization/worker-pool.ts';
import { layoutRoute, routeProblem, routingJobs, solvedOrder, type RouteLayout } from './route-optimize-plan.ts';
import { isBetter, scheduleOrder, type OrderTotals, type ScheduledStop } from './route-optimize-schedule.ts';
import type { OptimizeStop, RouteSnapshot } from './route-optimize-snapshot.ts';

export type OptimizeOptions = {
  optimizeFor: 'time' | 'distance';
  timeBudgetMs: number;
  seed: number;
  /** Caps on the search (from an earlier answer) to replay it exactly: the main pass and the relaxed one. */
  iterations?: number;
  relaxedIterations?: number;
};

export type InfeasibleStop = { stop_id: string; job_id: string; reason: UnassignedJob['reason']; detail: string; late_by_seconds: number };

export type RouteOrderPlan = {
  /** Every stop of the route in the proposed order: closed stops first, as they were. */
  stopIds: string[];
  /** The proposed order differs from the current one and beats it (see isBetter). */
  improved: boolean;
  before: OrderTotals;
  after: OrderTotals;
  /** The open stops of the proposed order with their times. */
  schedule: ScheduledStop[];
  infeasible: InfeasibleStop[];
  iterations: number;
  relaxedIterations: number | null;
  elapsedMs: number;
  provider: string;
  /** The clock's origin: schedule times are seconds after it. */
  departure: Date;
};

type Solver = (problem: RoutingProblem, options: RoutingOptions) => Promise<RoutingSolution>;

/**
 * A better order for a route's open stops (DESIGN §8): the site's travel matrix, the optimizer (on a worker
 * thread), each job's stops kept in order (pickups before dropoffs), `complete_after`/`complete_before` as time
 * windows. Stops whose windows cannot be met are placed by a second, relaxed pass where they cost least, and
 * reported with why; none is left out. The current order is kept unless the new one is better.
 *
 * @throws whatever the provider's `matrix` throws (422 MATRIX_TOO_LARGE / NO_ROUTE, 502 MAPPING_PROVIDER_ERROR)
 */
export async function planRouteOrder(snapshot: RouteSnapshot, provider: MappingProvider, options: OptimizeOptions, solve: Solver = solveInWorker): Promise<RouteOrderPlan> {
  const started = performance.now();
  const layout = layoutRoute(snapshot.stops, { inProgress: snapshot.route.phase === 'in_progress', position: snapshot.driverPosition });
  const matrix: DistanceMatrix =
    layout.points.length < 2 ? { distances_meters: [[0]], durations_seconds: [[0]] } : await provider.matrix(layout.points, layout.points, snapshot.mode);
  const departureMs = snapshot.departure.getTime();
  const head = layout.fixedFirst ? [layout.fixedFirst] : [];
  const schedule = (movable: OptimizeStop[]) => scheduleOrder(layout, [...head, ...movable], matrix, departureMs);
  const before = schedule(layout.movable);
  const search = layout.movable.length < 2 ? null : await searchOrder(layout, matrix, departureMs, before.stops[0]?.departure ?? 0, options, solve);
  const candidate = search ? schedule(search.order) : before;
  const keep = !isBetter(candidate.totals, before.totals, options.optimizeFor);
  const chosen = keep ? before : candidate;
  const movable = chosen.stops.slice(head.length).map((s) => s.stop);
  return {
    stopIds: [...layout.closed, ...head, ...movable].map((s) => s.id),
    improved: !keep && movable.some((stop, i) => stop.id !== layout.movable[i]!.id),
    before: before.totals,
    after: chosen.totals,
    schedule: chosen.stops,
    infeasible: explainLate(chosen.stops, search?.unassigned ?? []),
    iterations: search?.iterations ?? 0,
    relaxedIterations: search?.relaxedIterations ?? null,
    elapsedMs: Math.round(performance.now() - started),
    provider: matrix.answered_by?.provider ?? provider.name,
    departure: snapshot.departure,
  };
}

/** The optimizer's order: with every window first, then with the windows of what could not be placed lifted. */
async function searchOrder(layout: RouteLayout, matrix: DistanceMatrix, departureMs: number, shiftStart: number, options: OptimizeOptions, solve: Solver) {
  const objective = options.optimizeFor === 'distance' ? 'distance' : 'duration';
  const problem = (relaxed: Set<string>) => routeProblem(layout, matrix, routingJobs(layout, departureMs, relaxed), objective, layout.fixedFirst ? shiftStart : 0);
  const first = await solve(problem(new Set()), { timeBudgetMs: options.timeBudgetMs, seed: options.seed, iterations: options.iterations });
  if (first.unassigned.length === 0) return { order: solvedOrder(layout, first), unassigned: [], iterations: first.iterations, relaxedIterations: null };
  // A fresh search where the leftovers have no window and fit anywhere: half the budget is enough.
  const relaxed = new Set(first.unassigned.map((u) => u.jobId));
  const budget = { timeBudgetMs: Math.ceil(options.timeBudgetMs / 2), seed: options.seed, iterations: options.relaxedIterations };
  const second = await solve(problem(relaxed), budget);
  return { order: solvedOrder(layout, second), unassigned: first.unassigned, iterations: first.iterations, relaxedIterations: second.iterations };
}

/** Every late stop, with the optimizer's reason when it could not place the stop's job inside the windows. */
function explainLate(stops: ScheduledStop[], unassigned: UnassignedJob[]): InfeasibleStop[] {
  const reasonOf = (stop: OptimizeStop) => unassigned.find((u) => u.jobId === `v:${stop.id}` || u.jobId === `s:${stop.job_id}`);
  return stops
    .filter((s) => s.lateBy > 0)
    .map((s) => {
      const found = reasonOf(s.stop);
      const late = Math.ceil(s.lateBy);
      const deadline = new Date(s.stop.completeBefore!).toISOString();
      return {
        stop_id: s.stop.id,
        job_id: s.stop.job_id,
        reason: found?.reason ?? 'time_window',
        detail: `cannot be complete by complete_before ${deadline}: finishes ${late} s late${found ? ` (${found.detail})` : ''}`,
        late_by_seconds: late,
      };
    });
}
