import { performance } from 'node:perf_hooks';
import { createRouteImprover, hasOrderConstraints } from './intra-route-search.ts';
import type { RoutingModel } from './routing-model.ts';
import { recreate, ruin, ruinRoute, type RuinRecreateContext } from './ruin-recreate.ts';
import { SearchSolution } from './search-solution.ts';
import { createSeededRandom } from './seeded-random.ts';

export type SearchLimits = {
  seed: number;
  /** performance.now() value past which no new iteration starts. */
  deadline: number;
  maxIterations: number | undefined;
};

export type SearchOutcome = { solution: SearchSolution; iterations: number };

/** Temperatures relative to the mean arc cost of the first solution, so they need no per-instance setting. */
const START_TEMPERATURE = 0.3;
const END_TEMPERATURE = 0.005;
/** Annealing runs in cycles of doubling length, each from the best solution so far. */
const FIRST_CYCLE = 2_000;
/** Under vehicles-then-distance, the share of iterations that also try to empty a whole route. */
const ROUTE_REMOVAL_RATE = 0.1;
/** Checkpoints at 16·√2^k iterations: see `searchRoutes`. */
const FIRST_CHECKPOINT = 16;
const CHECKPOINT_RATIO = Math.SQRT2;

/**
 * Ruin-and-recreate (SISR) with simulated annealing, plus 2-opt/Or-opt inside every route a move touched when the
 * problem has no order constraints (and, when vehicles count, an occasional whole-route removal).
 *
 * Same seed → same answer: every decision comes from the seeded PRNG and the iteration count (the temperature is
 * a function of the iteration, never of the clock). The clock only decides when to stop, and then the answer is
 * the best solution as it stood at the last checkpoint (iterations 16·√2^k) reached before the deadline, so two
 * runs that reach the same checkpoint return the same routes; `maxIterations` (a result's `iterations`) replays a
 * run exactly on any machine. The search also stops, deterministically, after a long run without improvement (tiny
 * problems are solved long before their budget).
 */
export function searchRoutes(model: RoutingModel, objective: 'distance' | 'duration', limits: SearchLimits): SearchOutcome {
  const random = createSeededRandom(limits.seed);
  const context: RuinRecreateContext = { model, objective, random, ...jobOrderings(model) };
  // 2-opt/Or-opt pays where a reorder cannot break anything (TSP-like problems). With windows, loads or shipments
  // every gain needs a full check, and measured on VRPTW the iterations they cost are worth more to SISR itself.
  const improve = hasOrderConstraints(model) ? undefined : createRouteImprover(model, objective);
  const jobs = Array.from({ length: model.jobFirstNode.length }, (_, j) => j);
  let current = SearchSolution.empty(model, objective);
  recreate(context, current, jobs);
  if (improve) for (const route of current.routes) improve(route);
  let currentCost = current.cost(model);
  let best = current;
  let bestCost = currentCost;
  let checkpoint: SearchOutcome = { solution: best, iterations: 0 };
  const scale = meanArcCost(current);
  const stagnationLimit = 1_000 + 50 * model.jobNodeCount ** 2;
  const savesVehicles = model.vehicleFixedCost > 0;
  let nextCheckpoint = FIRST_CHECKPOINT;
  let checkpointIndex = 0;
  let cycleStart = 0;
  let cycleLength = FIRST_CYCLE;
  let lastImprovement = 0;
  let iteration = 0;
  while (model.jobNodeCount > 1) {
    if (limits.maxIterations !== undefined && iteration >= limits.maxIterations) return { solution: best, iterations: iteration };
    if (iteration - lastImprovement >= stagnationLimit) return { solution: best, iterations: iteration };
    if (performance.now() >= limits.deadline) return checkpoint;
    iteration++;
    if (iteration - cycleStart > cycleLength) {
      cycleStart = iteration - 1;
      cycleLength *= 2;
      current = best;
      currentCost = bestCost;
    }
    const progress = (iteration - cycleStart) / cycleLength;
    const temperature = scale * START_TEMPERATURE * (END_TEMPERATURE / START_TEMPERATURE) ** progress;
    const candidate = current.derive();
    const removed = savesVehicles && random.next() < ROUTE_REMOVAL_RATE ? [...ruinRoute(context, candidate), ...ruin(context, candidate)] : ruin(context, candidate);
    recreate(context, candidate, [...candidate.unassigned, ...removed]);
    if (improve) for (const v of candidate.ownedRoutes()) improve(candidate.routes[v]!, current.routes[v]);
    const cost = candidate.cost(model);
    if (cost < currentCost - temperature * Math.log(random.next())) {
      current = candidate;
      currentCost = cost;
    }
    if (cost < bestCost - 1e-9) {
      best = candidate;
      bestCost = cost;
      lastImprovement = iteration;
    }
    if (iteration >= nextCheckpoint) {
      checkpoint = { solution: best, iterations: iteration };
      checkpointIndex++;
      nextCheckpoint = Math.round(FIRST_CHECKPOINT * CHECKPOINT_RATIO ** checkpointIndex);
    }
  }
  return { solution: best, iterations: iteration };
}

function meanArcCost(solution: SearchSolution): number {
  let cost = 0;
  let arcs = 0;
  for (const route of solution.routes) {
    if (route.size === 0) continue;
    cost += route.cost;
    arcs += route.size + 1;
  }
  return arcs > 0 ? cost / arcs : 1;
}

function jobOrderings(model: RoutingModel) {
  const jobs = model.jobFirstNode.length;
  const jobSize = new Float64Array(jobs);
  const jobRemoteness = new Float64Array(jobs);
  const { dims, location, locationCount: n, arcCost } = model;
  const depot = model.vehicleCount > 0 ? location[model.vehicleStart[0]!]! : n - 1;
  for (let j = 0; j < jobs; j++) {
    const node = model.jobFirstNode[j]!;
    for (let d = 0; d < dims; d++) jobSize[j] = jobSize[j]! + Math.abs(model.demand[node * dims + d]!) + model.startLoad[node * dims + d]!;
    jobRemoteness[j] = arcCost[depot * n + location[node]!]!;
  }
  return { jobSize, jobRemoteness };
}
