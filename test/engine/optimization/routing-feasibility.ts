/**
 * An independent check of a routing answer, written apart from the optimizer (it shares only the public types):
 * every job served once (or reported unassigned), pickups before their dropoffs on the same vehicle, capacity at
 * every moment, service inside a time window, back by the end of the shift, and the reported totals.
 * Returns the violations found, empty when the answer is feasible.
 */
import type { RoutingProblem, RoutingSolution, RoutingStop } from '../../../engine/optimization/routing-problem.ts';

const TOLERANCE = 1e-6;

export function findViolations(problem: RoutingProblem, solution: RoutingSolution): string[] {
  const violations: string[] = [];
  const { distances_meters: distance, durations_seconds: duration } = problem.matrix;
  const jobs = new Map(problem.jobs.map((job) => [job.id, job]));
  const seen = new Map<string, string[]>();
  const usedVehicles = new Set<string>();
  let totalDistance = 0;

  for (const route of solution.routes) {
    const vehicle = problem.vehicles.find((v) => v.id === route.vehicleId);
    const label = `${route.vehicleId}#${route.vehicleIndex}`;
    if (!vehicle || route.vehicleIndex < 0 || route.vehicleIndex >= (vehicle.count ?? 1)) {
      violations.push(`${label}: no such vehicle`);
      continue;
    }
    if (usedVehicles.has(label)) violations.push(`${label}: used by two routes`);
    usedVehicles.add(label);
    const dims = vehicle.capacity?.length ?? 0;
    const load = Array.from({ length: dims }, () => 0);
    for (const stop of route.stops) {
      const job = jobs.get(stop.jobId);
      if (job?.type === 'visit') job.delivery?.forEach((amount, d) => (load[d] = (load[d] ?? 0) + amount));
    }
    checkLoad(load, vehicle.capacity, `${label} at its start`, violations);
    let time = vehicle.shift?.start ?? 0;
    let place = vehicle.startLocation;
    let previousService = 0;
    let routeDistance = 0;
    const onBoard = new Set<string>();
    for (const stop of route.stops) {
      const job = jobs.get(stop.jobId);
      if (!job) {
        violations.push(`${label}: unknown job ${stop.jobId}`);
        continue;
      }
      const visits = seen.get(job.id) ?? [];
      visits.push(`${label}:${stop.kind}`);
      seen.set(job.id, visits);
      const spec: RoutingStop = job.type === 'visit' ? job.stop : stop.kind === 'pickup' ? job.pickup : job.dropoff;
      const travel = place === undefined ? 0 : duration[place]![spec.location]!;
      routeDistance += place === undefined ? 0 : distance[place]![spec.location]!;
      const arrival = place === undefined ? time : time + previousService + travel;
      const start = startInWindows(arrival, spec.timeWindows);
      if (start === undefined) violations.push(`${label}: ${job.id} (${stop.kind}) reached at ${arrival.toFixed(2)}, after its windows`);
      time = start ?? arrival;
      previousService = spec.serviceSeconds ?? 0;
      place = spec.location;
      if (job.type === 'visit') {
        job.delivery?.forEach((amount, d) => (load[d] = (load[d] ?? 0) - amount));
        job.pickup?.forEach((amount, d) => (load[d] = (load[d] ?? 0) + amount));
      } else if (stop.kind === 'pickup') {
        onBoard.add(job.id);
        job.amount?.forEach((amount, d) => (load[d] = (load[d] ?? 0) + amount));
      } else {
        if (!onBoard.delete(job.id)) violations.push(`${label}: ${job.id} dropped off before it was picked up on this vehicle`);
        job.amount?.forEach((amount, d) => (load[d] = (load[d] ?? 0) - amount));
      }
      checkLoad(load, vehicle.capacity, `${label} after ${job.id}`, violations);
    }
    if (onBoard.size > 0) violations.push(`${label}: picked up but never dropped off: ${[...onBoard].join(', ')}`);
    // The shift covers the last service, and the drive to the end location when there is one.
    time += previousService;
    if (vehicle.endLocation !== undefined && place !== undefined) {
      time += duration[place]![vehicle.endLocation]!;
      routeDistance += distance[place]![vehicle.endLocation]!;
    }
    if (time > (vehicle.shift?.end ?? Infinity) + TOLERANCE) violations.push(`${label}: back at ${time.toFixed(2)}, after its shift`);
    if (Math.abs(routeDistance - route.distance) > TOLERANCE * Math.max(1, routeDistance)) {
      violations.push(`${label}: reports distance ${route.distance}, the matrix says ${routeDistance}`);
    }
    totalDistance += routeDistance;
  }

  const unassigned = new Set(solution.unassigned.map((u) => u.jobId));
  for (const job of problem.jobs) {
    const visits = seen.get(job.id) ?? [];
    const expected = job.type === 'visit' ? 1 : 2;
    if (visits.length === 0 && !unassigned.has(job.id)) violations.push(`${job.id}: neither served nor reported unassigned`);
    if (visits.length > 0 && unassigned.has(job.id)) violations.push(`${job.id}: served and reported unassigned`);
    if (visits.length > 0 && visits.length !== expected) violations.push(`${job.id}: visited as ${visits.join(', ')}`);
    if (job.type === 'shipment' && visits.length === 2 && visits[0]!.split(':')[0] !== visits[1]!.split(':')[0]) {
      violations.push(`${job.id}: pickup and dropoff on different vehicles`);
    }
  }
  if (Math.abs(totalDistance - solution.distance) > TOLERANCE * Math.max(1, totalDistance)) {
    violations.push(`total distance reported ${solution.distance}, the matrix says ${totalDistance}`);
  }
  if (solution.vehiclesUsed !== solution.routes.length) violations.push('vehiclesUsed does not match the routes');
  return violations;
}

/** The earliest moment at or after `arrival` inside a window, or undefined when all have closed. */
function startInWindows(arrival: number, windows: RoutingStop['timeWindows']): number | undefined {
  if (!windows || windows.length === 0) return arrival;
  const starts = windows.filter((w) => arrival <= w.end + TOLERANCE).map((w) => Math.max(arrival, w.start));
  return starts.length > 0 ? Math.min(...starts) : undefined;
}

function checkLoad(load: number[], capacity: number[] | undefined, where: string, violations: string[]): void {
  load.forEach((amount, d) => {
    if (amount > (capacity?.[d] ?? Infinity) + TOLERANCE) violations.push(`${where}: load ${amount} over capacity ${capacity?.[d]}`);
  });
}
