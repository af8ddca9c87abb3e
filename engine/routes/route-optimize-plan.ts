import type { DistanceMatrix, LatLng } from '../mapping/mapping-provider.ts';
import type { RoutingJob, RoutingProblem, RoutingSolution, TimeWindow } from '../optimization/routing-problem.ts';
import type { OptimizeStop } from './route-optimize-snapshot.ts';

/**
 * How a route's stops are laid out for the optimizer. Matrix rows: the driver's position (if any), then the fixed
 * first stop (if any), then the movable stops in their current order.
 */
export type RouteLayout = {
  /** Completed and cancelled stops: they keep their place, at the front, in their current order. */
  closed: OptimizeStop[];
  /** A route in progress without a known driver position starts from its first open stop, which stays first. */
  fixedFirst: OptimizeStop | null;
  movable: OptimizeStop[];
  startPoint: LatLng | null;
  points: LatLng[];
  /** Per job, its movable stops in the order that must be kept (the route's, with pickups moved before dropoffs). */
  chains: Map<string, OptimizeStop[]>;
};

export function layoutRoute(stops: OptimizeStop[], start: { inProgress: boolean; position: LatLng | null }): RouteLayout {
  const closed = stops.filter((s) => s.closed);
  const open = stops.filter((s) => !s.closed);
  const fixedFirst = start.inProgress && !start.position && open.length > 0 ? open[0]! : null;
  const movable = fixedFirst ? open.slice(1) : open;
  const chains = new Map<string, OptimizeStop[]>();
  for (const stop of movable) chains.set(stop.job_id, [...(chains.get(stop.job_id) ?? []), stop]);
  for (const [jobId, chain] of chains) {
    // Only an order the route's own check would refuse is changed: pickups first, the rest as they were.
    const firstDropoff = chain.findIndex((s) => s.type === 'dropoff');
    if (firstDropoff >= 0 && chain.slice(firstDropoff).some((s) => s.type === 'pickup')) {
      chains.set(jobId, [...chain.filter((s) => s.type === 'pickup'), ...chain.filter((s) => s.type !== 'pickup')]);
    }
  }
  const head = [...(start.position ? [start.position] : []), ...(fixedFirst ? [fixedFirst.point] : [])];
  return { closed, fixedFirst, movable, startPoint: start.position, points: [...head, ...movable.map((s) => s.point)], chains };
}

/** The matrix row of the route's start (driver position or fixed first stop), or null for an open start. */
export const startRow = (layout: RouteLayout): number | null => (layout.startPoint || layout.fixedFirst ? 0 : null);
const firstMovableRow = (layout: RouteLayout) => (layout.startPoint ? 1 : 0) + (layout.fixedFirst ? 1 : 0);

/**
 * A stop's window on the problem's clock (seconds after the departure instant), or null when it has none. Service
 * must start by `complete_before` minus the service time, so that it is complete before then.
 */
export function stopWindow(stop: OptimizeStop, departureMs: number): TimeWindow | null {
  if (stop.completeAfter === null && stop.completeBefore === null) return null;
  const start = stop.completeAfter === null ? -Infinity : (stop.completeAfter - departureMs) / 1000;
  const end = stop.completeBefore === null ? Infinity : (stop.completeBefore - departureMs) / 1000 - stop.serviceSeconds;
  return { start, end: Math.max(start, end) };
}

/**
 * Jobs for the optimizer. A job with one movable stop is a visit; with two or more, its first and last stops are a
 * shipment (same vehicle, first before last) and the stops between are visits. `keepChains` then puts each job's
 * stops back in their kept order over the places they got, so the order of a job's stops never changes.
 * Routing job ids: `v:<stop id>` for a visit, `s:<job id>` for a shipment.
 */
export function routingJobs(layout: RouteLayout, departureMs: number, relaxed: ReadonlySet<string>): RoutingJob[] {
  const row = new Map(layout.movable.map((s, i) => [s.id, firstMovableRow(layout) + i]));
  const routingStop = (stop: OptimizeStop, jobId: string) => {
    const window = relaxed.has(jobId) ? null : stopWindow(stop, departureMs);
    return { location: row.get(stop.id)!, serviceSeconds: stop.serviceSeconds, timeWindows: window ? [window] : [] };
  };
  const jobs: RoutingJob[] = [];
  for (const [jobId, chain] of layout.chains) {
    if (chain.length === 1) {
      jobs.push({ id: `v:${chain[0]!.id}`, type: 'visit', stop: routingStop(chain[0]!, `v:${chain[0]!.id}`) });
      continue;
    }
    const id = `s:${jobId}`;
    jobs.push({ id, type: 'shipment', pickup: routingStop(chain[0]!, id), dropoff: routingStop(chain.at(-1)!, id) });
    for (const middle of chain.slice(1, -1)) jobs.push({ id: `v:${middle.id}`, type: 'visit', stop: routingStop(middle, `v:${middle.id}`) });
  }
  return jobs;
}

/** The single-vehicle problem: an open end, the route's start (if any), the clock starting when the vehicle leaves it. */
export function routeProblem(layout: RouteLayout, matrix: DistanceMatrix, jobs: RoutingJob[], objective: 'distance' | 'duration', shiftStart: number): RoutingProblem {
  const start = startRow(layout);
  return { matrix, jobs, objective, vehicles: [{ id: 'route', shift: { start: shiftStart, end: Infinity }, ...(start === null ? {} : { startLocation: start }) }] };
}

/** The movable stops in the solution's order (anything left out, after the rest in its current order), chains kept. */
export function solvedOrder(layout: RouteLayout, solution: RoutingSolution): OptimizeStop[] {
  const byId = new Map(layout.movable.map((s) => [s.id, s]));
  const ordered: OptimizeStop[] = [];
  for (const stop of solution.routes[0]?.stops ?? []) {
    const [kind, id] = [stop.jobId.slice(0, 1), stop.jobId.slice(2)];
    if (kind === 'v') ordered.push(byId.get(id)!);
    else ordered.push(stop.kind === 'pickup' ? layout.chains.get(id)![0]! : layout.chains.get(id)!.at(-1)!);
  }
  const placed = new Set(ordered.map((s) => s.id));
  return keepChains([...ordered, ...layout.movable.filter((s) => !placed.has(s.id))], layout.chains);
}

/** Each job's stops fill the places its stops occupy, in the job's kept order. */
export function keepChains(order: OptimizeStop[], chains: Map<string, OptimizeStop[]>): OptimizeStop[] {
  const next = new Map<string, number>();
  return order.map((stop) => {
    const index = next.get(stop.job_id) ?? 0;
    next.set(stop.job_id, index + 1);
    return chains.get(stop.job_id)![index]!;
  });
}
