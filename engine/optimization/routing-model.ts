import type { RoutingProblem, RoutingStop, RoutingVehicle } from './routing-problem.ts';
import { assertRoutingProblem } from './routing-problem-input.ts';

/**
 * The problem flattened into typed arrays, the form the search works on.
 *
 * Nodes: first every job stop (a visit is one node; a shipment is two, pickup then dropoff), then two depot nodes
 * per vehicle (its start and its end). Vehicles are expanded from their `count`. One extra matrix location,
 * `nowhere`, is zero away from everything: the start or end of a vehicle without a start or end location.
 */
export type RoutingModel = {
  jobNodeCount: number;
  nodeCount: number;
  dims: number;
  /** Matrix location of each node. */
  location: Int32Array;
  service: Float64Array;
  /** Windows of node i: twStart/twEnd[twFirst[i] .. twFirst[i+1]). Every node has at least one. */
  twFirst: Int32Array;
  twStart: Float64Array;
  twEnd: Float64Array;
  /** Change of load at the node, per dimension (node * dims + d): +pickup, -dropoff / delivery. */
  demand: Float64Array;
  /** Loaded at the vehicle's start for this node (visits' deliveries), per dimension. */
  startLoad: Float64Array;
  /** The other node of a shipment, or -1. */
  partner: Int32Array;
  /** 0 visit, 1 pickup, 2 dropoff. */
  role: Uint8Array;
  jobOfNode: Int32Array;
  /** The first (or only) node of each job. */
  jobFirstNode: Int32Array;
  vehicleCount: number;
  vehicleStart: Int32Array;
  vehicleEnd: Int32Array;
  /** Index into problem.vehicles, so identical vehicles are tried once per insertion. */
  vehicleKind: Int32Array;
  vehicleOrdinal: Int32Array;
  /** vehicle * dims + d; Infinity when unlimited. */
  capacity: Float64Array;
  locationCount: number;
  distance: Float64Array;
  duration: Float64Array;
  /** What the search minimises per arc: distance or duration. */
  arcCost: Float64Array;
  /** Added per used vehicle (vehicles-then-distance) and per unassigned job: dominate every distance. */
  vehicleFixedCost: number;
  unassignedPenalty: number;
  /** Per job node: the other job nodes, nearest first (by arc cost), for string removal. */
  neighbours: Int32Array;
  neighbourCount: number;
  symmetric: boolean;
};

const MAX_NEIGHBOURS = 100;

/** @throws DomainError 400 on an invalid problem (see assertRoutingProblem) */
export function buildRoutingModel(problem: RoutingProblem): RoutingModel {
  assertRoutingProblem(problem);
  const stops: { stop: RoutingStop; job: number; role: 0 | 1 | 2; amount: number[] | undefined; delivery: number[] | undefined }[] = [];
  const jobFirstNode = new Int32Array(problem.jobs.length);
  problem.jobs.forEach((job, j) => {
    jobFirstNode[j] = stops.length;
    if (job.type === 'visit') {
      const pickup = job.pickup;
      const delivery = job.delivery;
      const change = combine(pickup, delivery);
      stops.push({ stop: job.stop, job: j, role: 0, amount: change, delivery });
    } else {
      stops.push({ stop: job.pickup, job: j, role: 1, amount: job.amount, delivery: undefined });
      stops.push({ stop: job.dropoff, job: j, role: 2, amount: job.amount?.map((a) => -a), delivery: undefined });
    }
  });
  const dims = dimensionCount(problem);
  const slots: { vehicle: RoutingVehicle; kind: number; ordinal: number }[] = [];
  problem.vehicles.forEach((vehicle, kind) => {
    for (let ordinal = 0; ordinal < (vehicle.count ?? 1); ordinal++) slots.push({ vehicle, kind, ordinal });
  });
  const jobNodeCount = stops.length;
  const nodeCount = jobNodeCount + 2 * slots.length;
  const locationCount = problem.matrix.distances_meters.length + 1;
  const nowhere = locationCount - 1;

  const location = new Int32Array(nodeCount);
  const service = new Float64Array(nodeCount);
  const twFirst = new Int32Array(nodeCount + 1);
  const windows: { start: number; end: number }[] = [];
  const demand = new Float64Array(nodeCount * dims);
  const startLoad = new Float64Array(nodeCount * dims);
  const partner = new Int32Array(nodeCount).fill(-1);
  const role = new Uint8Array(nodeCount);
  const jobOfNode = new Int32Array(nodeCount).fill(-1);
  const addWindows = (node: number, list: { start: number; end: number }[] | undefined) => {
    twFirst[node] = windows.length;
    if (list && list.length > 0) windows.push(...[...list].sort((a, b) => a.start - b.start));
    else windows.push({ start: -Infinity, end: Infinity });
  };
  stops.forEach((s, node) => {
    location[node] = s.stop.location;
    service[node] = s.stop.serviceSeconds ?? 0;
    addWindows(node, s.stop.timeWindows);
    role[node] = s.role;
    jobOfNode[node] = s.job;
    if (s.role === 1) partner[node] = node + 1;
    if (s.role === 2) partner[node] = node - 1;
    for (let d = 0; d < dims; d++) {
      demand[node * dims + d] = s.amount?.[d] ?? 0;
      startLoad[node * dims + d] = s.delivery?.[d] ?? 0;
    }
  });
  const vehicleStart = new Int32Array(slots.length);
  const vehicleEnd = new Int32Array(slots.length);
  const capacity = new Float64Array(slots.length * dims);
  slots.forEach(({ vehicle }, v) => {
    const start = jobNodeCount + 2 * v;
    const shift = vehicle.shift ?? { start: 0, end: Infinity };
    vehicleStart[v] = start;
    vehicleEnd[v] = start + 1;
    location[start] = vehicle.startLocation ?? nowhere;
    location[start + 1] = vehicle.endLocation ?? nowhere;
    addWindows(start, [{ start: shift.start, end: shift.end }]);
    addWindows(start + 1, [{ start: shift.start, end: shift.end }]);
    for (let d = 0; d < dims; d++) capacity[v * dims + d] = vehicle.capacity?.[d] ?? Infinity;
  });
  twFirst[nodeCount] = windows.length;

  const distance = flatten(problem.matrix.distances_meters, locationCount);
  const duration = flatten(problem.matrix.durations_seconds, locationCount);
  const arcCost = problem.objective === 'duration' ? duration : distance;
  let longestArc = 0;
  for (const value of arcCost) longestArc = Math.max(longestArc, value);
  // More than any set of routes can cost (each node entered at most once; under `duration`, plus every service
  // and each vehicle waiting through the whole horizon), so it never trades against cost.
  const waitingBound = problem.objective === 'duration' ? service.reduce((sum, s) => sum + s, 0) + horizon(windows) * slots.length : 0;
  const bound = (longestArc + 1) * (nodeCount + 1) + waitingBound;
  const vehicleFixedCost = problem.objective === 'vehicles-then-distance' ? bound : 0;
  const { neighbours, neighbourCount } = nearestJobNodes(jobNodeCount, location, arcCost, locationCount);
  return {
    jobNodeCount, nodeCount, dims, location, service, twFirst,
    twStart: Float64Array.from(windows, (w) => w.start),
    twEnd: Float64Array.from(windows, (w) => w.end),
    demand, startLoad, partner, role, jobOfNode, jobFirstNode,
    vehicleCount: slots.length, vehicleStart, vehicleEnd,
    vehicleKind: Int32Array.from(slots, (s) => s.kind),
    vehicleOrdinal: Int32Array.from(slots, (s) => s.ordinal),
    capacity, locationCount, distance, duration, arcCost, vehicleFixedCost,
    unassignedPenalty: (vehicleFixedCost + bound) * (slots.length + 1),
    neighbours, neighbourCount, symmetric: isSymmetric(arcCost, locationCount),
  };
}

/** From the earliest finite window start to the latest finite window end (0 when nothing is bounded). */
function horizon(windows: { start: number; end: number }[]): number {
  let earliest = Infinity;
  let latest = -Infinity;
  for (const w of windows) {
    if (Number.isFinite(w.start)) earliest = Math.min(earliest, w.start);
    if (Number.isFinite(w.end)) latest = Math.max(latest, w.end);
  }
  return latest > earliest ? latest - earliest : 0;
}

function combine(pickup: number[] | undefined, delivery: number[] | undefined): number[] | undefined {
  if (!pickup && !delivery) return undefined;
  const length = Math.max(pickup?.length ?? 0, delivery?.length ?? 0);
  return Array.from({ length }, (_, d) => (pickup?.[d] ?? 0) - (delivery?.[d] ?? 0));
}

function dimensionCount(problem: RoutingProblem): number {
  let dims = 0;
  for (const v of problem.vehicles) dims = Math.max(dims, v.capacity?.length ?? 0);
  for (const job of problem.jobs) {
    const amounts = job.type === 'visit' ? [job.delivery, job.pickup] : [job.amount];
    for (const a of amounts) dims = Math.max(dims, a?.length ?? 0);
  }
  return dims;
}

/** Copies the rows into a flat matrix with one extra location (`nowhere`, the last) at zero from everything. */
function flatten(rows: number[][], size: number): Float64Array {
  const flat = new Float64Array(size * size);
  rows.forEach((row, i) => row.forEach((value, j) => (flat[i * size + j] = value)));
  return flat;
}

function nearestJobNodes(count: number, location: Int32Array, cost: Float64Array, size: number) {
  const neighbourCount = Math.min(MAX_NEIGHBOURS, count);
  const neighbours = new Int32Array(count * neighbourCount);
  const others = Array.from({ length: count }, (_, i) => i);
  for (let i = 0; i < count; i++) {
    const from = location[i]! * size;
    // The node itself first (cost 0 to itself), then by distance: removal starts at the seed.
    const sorted = others
      .map((j) => ({ j, c: j === i ? -1 : Math.min(cost[from + location[j]!]!, cost[location[j]! * size + location[i]!]!) }))
      .sort((a, b) => a.c - b.c || a.j - b.j);
    for (let k = 0; k < neighbourCount; k++) neighbours[i * neighbourCount + k] = sorted[k]!.j;
  }
  return { neighbours, neighbourCount };
}

function isSymmetric(cost: Float64Array, size: number): boolean {
  for (let i = 0; i < size; i++) {
    for (let j = i + 1; j < size; j++) if (cost[i * size + j] !== cost[j * size + i]) return false;
  }
  return true;
}
