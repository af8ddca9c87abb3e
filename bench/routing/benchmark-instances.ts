/**
 * Readers for the public routing instances in ../shared/bench-data/routing (formats in its README), each turned
 * into the optimizer's RoutingProblem with the conventions of the published results:
 * - Solomon (VRPTW) and Li & Lim (PDPTW): travel time = Euclidean distance, not rounded; cost = total distance.
 * - TSPLIB EUC_2D: each edge rounded to the nearest integer; one vehicle leaving from and returning to city 1.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { euclideanMatrix, type PlanePoint } from '../../engine/optimization/euclidean-matrix.ts';
import type { RoutingJob, RoutingObjective, RoutingProblem, RoutingStop } from '../../engine/optimization/routing-problem.ts';

export const ROUTING_DATA = fileURLToPath(new URL('../../../shared/bench-data/routing/', import.meta.url));

export type InstanceClass = 'tsplib' | 'solomon' | 'pdptw';

export type BestKnown = { cost: number; vehicles: number | undefined };

export type BenchmarkInstance = {
  name: string;
  instanceClass: InstanceClass;
  problem: RoutingProblem;
  /** As the literature ranks it: fewest vehicles, then distance (TSPLIB: the optimum). */
  bestKnown: BestKnown;
  /** The best distance regardless of vehicles (Solomon `_distance` keys; otherwise the same as bestKnown). */
  bestKnownDistance: BestKnown;
};

const FOLDERS: Record<InstanceClass, { folder: string; extension: string }> = {
  tsplib: { folder: 'tsplib', extension: '.tsp' },
  solomon: { folder: 'solomon', extension: '.txt' },
  pdptw: { folder: 'pdptw', extension: '.txt' },
};

/** Every instance of a class, in file-name order, with the objective to solve it for. */
export function loadInstances(instanceClass: InstanceClass, objective: RoutingObjective = 'distance'): BenchmarkInstance[] {
  const { folder, extension } = FOLDERS[instanceClass];
  const directory = path.join(ROUTING_DATA, folder);
  const bks = JSON.parse(readFileSync(path.join(directory, 'BKS.json'), 'utf8')) as Record<string, { best_known_cost: number; solved_with_vehicles?: number }>;
  const names = Object.keys(bks).filter((key) => !key.endsWith('_distance'));
  const known = (key: string): BestKnown | undefined => {
    const entry = bks[key];
    return entry && { cost: entry.best_known_cost, vehicles: entry.solved_with_vehicles };
  };
  return names.map((name) => {
    const text = readFileSync(path.join(directory, `${name}${extension}`), 'utf8');
    const problem = instanceClass === 'tsplib' ? fromTsplib(text) : instanceClass === 'solomon' ? fromSolomon(text, objective) : fromLiLim(text, objective);
    const bestKnown = known(name)!;
    return { name, instanceClass, problem, bestKnown, bestKnownDistance: known(`${name}_distance`) ?? bestKnown };
  });
}

/** TSPLIB .tsp with EUC_2D coordinates. */
export function fromTsplib(text: string): RoutingProblem {
  const lines = text.split('\n').map((line) => line.trim());
  const start = lines.indexOf('NODE_COORD_SECTION') + 1;
  const points: PlanePoint[] = [];
  for (const line of lines.slice(start)) {
    if (line === 'EOF' || line === '') break;
    const [, x, y] = line.split(/\s+/).map(Number);
    points.push({ x: x!, y: y! });
  }
  const jobs: RoutingJob[] = points.slice(1).map((_, i) => ({ id: String(i + 2), type: 'visit', stop: { location: i + 1 } }));
  return {
    matrix: euclideanMatrix(points, 'nearest-integer'),
    vehicles: [{ id: 'salesman', startLocation: 0, endLocation: 0 }],
    jobs,
    objective: 'distance',
  };
}

/** Solomon: depot = customer 0 (its window is the horizon); each customer a visit with a delivery. */
export function fromSolomon(text: string, objective: RoutingObjective): RoutingProblem {
  const lines = text.split('\n').map((line) => line.trim().split(/\s+/).map(Number));
  const header = lines.findIndex((cells) => cells.length === 2 && cells.every(Number.isFinite));
  const [vehicles, capacity] = lines[header]!;
  const rows = lines.filter((cells) => cells.length === 7 && cells.every(Number.isFinite));
  const [depot, ...customers] = rows;
  const points = rows.map(([, x, y]) => ({ x: x!, y: y! }));
  const jobs: RoutingJob[] = customers.map(([id, , , demand, ready, due, service], i) => ({
    id: String(id),
    type: 'visit',
    stop: { location: i + 1, serviceSeconds: service!, timeWindows: [{ start: ready!, end: due! }] },
    delivery: [demand!],
  }));
  const shift = { start: depot![4]!, end: depot![5]! };
  return {
    matrix: euclideanMatrix(points),
    vehicles: [{ id: 'vehicle', count: vehicles!, capacity: [capacity!], shift, startLocation: 0, endLocation: 0 }],
    jobs,
    objective,
  };
}

/** Li & Lim: each pickup row names its delivery row; one shipment per pair. */
export function fromLiLim(text: string, objective: RoutingObjective): RoutingProblem {
  const [first, ...rest] = text.trim().split('\n').map((line) => line.trim().split(/\s+/).map(Number));
  const [vehicles, capacity] = first!;
  const rows = rest.filter((cells) => cells.length === 9);
  const byId = new Map(rows.map((row, i) => [row[0]!, { row, location: i }]));
  const points = rows.map(([, x, y]) => ({ x: x!, y: y! }));
  const depot = rows[0]!;
  const jobs: RoutingJob[] = [];
  rows.forEach((row, location) => {
    const deliveryId = row[8]!;
    if (location === 0 || deliveryId === 0) return;
    const delivery = byId.get(deliveryId)!;
    jobs.push({ id: String(row[0]), type: 'shipment', pickup: liLimStop(row, location), dropoff: liLimStop(delivery.row, delivery.location), amount: [row[3]!] });
  });
  return {
    matrix: euclideanMatrix(points),
    vehicles: [{ id: 'vehicle', count: vehicles!, capacity: [capacity!], shift: { start: depot[4]!, end: depot[5]! }, startLocation: 0, endLocation: 0 }],
    jobs,
    objective,
  };
}

/** Columns: id x y demand ready due service pickup delivery. */
function liLimStop(row: number[], location: number): RoutingStop {
  return { location, serviceSeconds: row[6]!, timeWindows: [{ start: row[4]!, end: row[5]! }] };
}
