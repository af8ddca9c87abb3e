import { noChoice, tryShipment, tryVisit } from './insertion.ts';
import type { RoutingModel } from './routing-model.ts';
import type { SearchSolution } from './search-solution.ts';
import type { SeededRandom } from './seeded-random.ts';

/**
 * Slack Induction by String Removals (Christiaens & Vanden Berghe, Transportation Science 2020): remove a few
 * strings of nearby stops from nearby routes, then put the jobs back greedily with "blinks". The parameters are
 * the paper's defaults, the same for every instance.
 */
export type RuinRecreateContext = {
  model: RoutingModel;
  objective: 'distance' | 'duration';
  random: SeededRandom;
  /** Per job: total amount (for "largest first") and distance from the first vehicle's start ("farthest first"). */
  jobSize: Float64Array;
  jobRemoteness: Float64Array;
};

const AVERAGE_REMOVED = 10;
const MAX_STRING = 10;
const BLINK_RATE = 0.01;
const ORDER_WEIGHTS = [4, 4, 2, 1] as const; // random, largest, farthest, closest

/** Removes strings around a random seed stop; returns the removed jobs (the solution's routes are owned). */
export function ruin(context: RuinRecreateContext, solution: SearchSolution): number[] {
  const { model, random } = context;
  let placed = 0;
  let usedRoutes = 0;
  for (const route of solution.routes) {
    placed += route.size;
    if (route.size > 0) usedRoutes++;
  }
  if (placed === 0) return [];
  const maxString = Math.min(MAX_STRING, placed / usedRoutes);
  const maxStrings = (4 * AVERAGE_REMOVED) / (1 + maxString) - 1;
  const strings = Math.floor(random.next() * maxStrings) + 1;
  let seed = random.int(model.jobNodeCount);
  while (solution.routeOf[seed] === -1) seed = (seed + 1) % model.jobNodeCount;
  const ruined = new Set<number>();
  const removed: number[] = [];
  const base = seed * model.neighbourCount;
  for (let i = 0; i < model.neighbourCount && ruined.size < strings; i++) {
    const node = model.neighbours[base + i]!;
    const vehicle = solution.routeOf[node]!;
    if (vehicle === -1 || ruined.has(vehicle)) continue;
    ruined.add(vehicle);
    removeString(context, solution, vehicle, node, maxString, removed);
  }
  return removed;
}

/**
 * Empties the smaller of two used routes picked at random: under `vehicles-then-distance` the move that can save a
 * vehicle (when everything fits elsewhere), which string removals alone rarely find.
 */
export function ruinRoute(context: RuinRecreateContext, solution: SearchSolution): number[] {
  const { model, random } = context;
  const used = solution.routes.filter((route) => route.size > 0);
  if (used.length < 2) return [];
  const a = used[random.int(used.length)]!;
  const b = used[random.int(used.length)]!;
  const route = solution.own((a.size <= b.size ? a : b).vehicle);
  const removed: number[] = [];
  for (const node of route.nodes) {
    solution.routeOf[node] = -1;
    if (model.role[node] !== 2) removed.push(model.jobOfNode[node]!);
  }
  route.nodes = [];
  route.refresh(model, context.objective);
  return removed;
}

/** Puts the jobs back one by one at their cheapest feasible place; the ones that fit nowhere stay unassigned. */
export function recreate(context: RuinRecreateContext, solution: SearchSolution, jobs: number[]): void {
  const { model, random } = context;
  orderJobs(context, jobs);
  const unassigned: number[] = [];
  const triedEmptyKind = new Uint8Array(model.vehicleCount);
  for (const job of jobs) {
    const node = model.jobFirstNode[job]!;
    const best = noChoice();
    // Blinks may skip every feasible place (an empty route has one): then look again without them.
    for (const blink of [BLINK_RATE, 0]) {
      triedEmptyKind.fill(0);
      for (const route of solution.routes) {
        if (route.size === 0) {
          // Identical empty vehicles give identical answers: try one of each kind.
          const kind = model.vehicleKind[route.vehicle]!;
          if (triedEmptyKind[kind]) continue;
          triedEmptyKind[kind] = 1;
        }
        if (model.role[node] === 1) tryShipment(model, route, node, blink, random, best);
        else tryVisit(model, route, node, blink, random, best);
      }
      if (best.vehicle !== -1) break;
    }
    if (best.vehicle === -1) {
      unassigned.push(job);
      continue;
    }
    const route = solution.own(best.vehicle);
    if (best.dropAfter >= 0) route.nodes.splice(best.dropAfter, 0, node + 1);
    route.nodes.splice(best.after, 0, node);
    solution.routeOf[node] = best.vehicle;
    if (best.dropAfter >= 0) solution.routeOf[node + 1] = best.vehicle;
    route.refresh(model, context.objective);
  }
  solution.unassigned = unassigned;
}

function removeString(context: RuinRecreateContext, solution: SearchSolution, vehicle: number, node: number, maxString: number, removed: number[]): void {
  const { model, random } = context;
  const route = solution.own(vehicle);
  const size = route.size;
  const length = Math.floor(random.next() * Math.min(size, maxString)) + 1;
  const position = route.nodes.indexOf(node);
  // A split string keeps `kept` stops in the middle of a longer string (half the time, when there is room).
  let kept = 0;
  if (length < size && random.next() < 0.5) {
    kept = 1;
    while (kept < size - length && random.next() < 0.5) kept++;
  }
  const span = length + kept;
  const first = Math.max(0, Math.min(size - span, position - random.int(span)));
  const keptFrom = first + random.int(length + 1);
  const doomed = new Set<number>();
  for (let p = first; p < first + span; p++) {
    if (p >= keptFrom && p < keptFrom + kept) continue;
    const victim = route.nodes[p]!;
    doomed.add(victim);
    if (model.partner[victim]! >= 0) doomed.add(model.partner[victim]!);
  }
  route.nodes = route.nodes.filter((n) => !doomed.has(n));
  for (const victim of doomed) {
    solution.routeOf[victim] = -1;
    if (model.role[victim] !== 2) removed.push(model.jobOfNode[victim]!);
  }
  route.refresh(model, context.objective);
}

function orderJobs(context: RuinRecreateContext, jobs: number[]): void {
  const { random, jobSize, jobRemoteness } = context;
  let pick = random.next() * ORDER_WEIGHTS.reduce((a, b) => a + b, 0);
  let order = 0;
  while (pick >= ORDER_WEIGHTS[order]!) pick -= ORDER_WEIGHTS[order++]!;
  if (order === 0) {
    for (let i = jobs.length - 1; i > 0; i--) {
      const j = random.int(i + 1);
      [jobs[i], jobs[j]] = [jobs[j]!, jobs[i]!];
    }
  } else if (order === 1) jobs.sort((a, b) => jobSize[b]! - jobSize[a]! || a - b);
  else if (order === 2) jobs.sort((a, b) => jobRemoteness[b]! - jobRemoteness[a]! || a - b);
  else jobs.sort((a, b) => jobRemoteness[a]! - jobRemoteness[b]! || a - b);
}
