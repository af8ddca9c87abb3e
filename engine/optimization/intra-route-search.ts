import type { RouteState } from './route-state.ts';
import type { RoutingModel } from './routing-model.ts';

const EPSILON = 1e-9;
const OR_OPT_LENGTHS = [1, 2, 3] as const;
/** Moves are only tried where they create an arc to one of a stop's nearest stops. */
const NEAREST = 12;

/** Improves a route in place; with the route it came from, starts only from the stops whose neighbours changed. */
export type RouteImprover = (route: RouteState, parent?: RouteState) => boolean;

/**
 * 2-opt and Or-opt inside one route, first improvement, with a work list of stops to start from ("don't look
 * bits"): the stops whose arcs changed since the parent route, then the ends of every move made. Gains are O(1)
 * (prefix sums of the arc costs both ways, so asymmetric matrices are fine) over neighbour lists. Only for problems
 * where any order is feasible (`hasOrderConstraints` false): moves are not checked against windows or loads.
 * The improver returns whether the route changed (it is refreshed when it did).
 */
export function createRouteImprover(model: RoutingModel, objective: 'distance' | 'duration'): RouteImprover {
  const position = new Int32Array(model.nodeCount).fill(-1);
  const parentNext = new Int32Array(model.nodeCount).fill(-1);
  const queued = new Uint8Array(model.nodeCount);
  const { arcCost, location: loc, locationCount: n, neighbours, neighbourCount, jobNodeCount } = model;
  const near = Math.min(NEAREST, neighbourCount);
  const cost = (a: number, b: number) => arcCost[loc[a]! * n + loc[b]!]!;
  let forward = new Float64Array(0);
  let backward = new Float64Array(0);
  let seq: number[] = [];
  const queue: number[] = [];

  const index = () => {
    if (forward.length < seq.length) {
      forward = new Float64Array(seq.length * 2);
      backward = new Float64Array(seq.length * 2);
    }
    position[seq[0]!] = 0;
    for (let k = 1; k < seq.length; k++) {
      position[seq[k]!] = k;
      forward[k] = forward[k - 1]! + cost(seq[k - 1]!, seq[k]!);
      backward[k] = backward[k - 1]! + cost(seq[k]!, seq[k - 1]!);
    }
  };
  const activate = (...nodes: number[]) => {
    for (const node of nodes) {
      if (node < jobNodeCount && !queued[node]) {
        queued[node] = 1;
        queue.push(node);
      }
    }
  };

  /** Reverses seq[p+1..q]: new arcs (seq[p], seq[q]) and (seq[p+1], seq[q+1]). */
  const tryReverse = (p: number, q: number): boolean => {
    if (p < 0 || q < p + 2 || q >= seq.length - 1) return false;
    const inner = model.symmetric ? 0 : backward[q]! - backward[p + 1]! - (forward[q]! - forward[p + 1]!);
    const delta = cost(seq[p]!, seq[q]!) + cost(seq[p + 1]!, seq[q + 1]!) - cost(seq[p]!, seq[p + 1]!) - cost(seq[q]!, seq[q + 1]!) + inner;
    if (delta > -EPSILON) return false;
    activate(seq[p]!, seq[p + 1]!, seq[q]!, seq[q + 1]!);
    reverse(seq, p + 1, q);
    index();
    return true;
  };

  /** Moves seq[s..s+length) right after position p. */
  const tryMove = (s: number, length: number, p: number): boolean => {
    const e = s + length - 1;
    if (e >= seq.length - 1 || p < 0 || (p >= s - 1 && p <= e) || p >= seq.length - 1) return false;
    const first = seq[s]!;
    const tail = seq[e]!;
    const gain = cost(seq[s - 1]!, first) + cost(tail, seq[e + 1]!) - cost(seq[s - 1]!, seq[e + 1]!);
    const delta = cost(seq[p]!, first) + cost(tail, seq[p + 1]!) - cost(seq[p]!, seq[p + 1]!) - gain;
    if (delta > -EPSILON) return false;
    activate(seq[s - 1]!, seq[e + 1]!, seq[p]!, seq[p + 1]!, first, tail);
    const segment = seq.slice(s, e + 1);
    const rest = [...seq.slice(0, s), ...seq.slice(e + 1)];
    const at = p < s ? p + 1 : p + 1 - length;
    seq = [...rest.slice(0, at), ...segment, ...rest.slice(at)];
    index();
    return true;
  };

  /**
   * The first improving move that creates an arc between `a` and one of its nearest stops `c` (or from the start
   * depot): 2-opt either side of both, or a string of 1–3 starting or ending at `a` put beside `c` either side.
   */
  const improveFrom = (a: number): boolean => {
    const i = position[a]!;
    if (tryReverse(0, i) || tryReverse(0, i - 1)) return true;
    for (let k = 1; k < near; k++) {
      const j = position[neighbours[a * neighbourCount + k]!]!;
      if (j < 0) continue;
      const [low, high] = j > i ? [i, j] : [j, i];
      if (tryReverse(low, high) || tryReverse(low - 1, high - 1)) return true;
      for (const length of OR_OPT_LENGTHS) {
        for (const start of [i, i - length + 1]) {
          if (start >= 1 && (tryMove(start, length, j) || tryMove(start, length, j - 1))) return true;
        }
      }
    }
    return false;
  };

  return (route, parent) => {
    if (route.size < 3) return false;
    seq = [model.vehicleStart[route.vehicle]!, ...route.nodes, model.vehicleEnd[route.vehicle]!];
    index();
    if (parent) for (let k = 0; k + 1 < parent.size; k++) parentNext[parent.nodes[k]!] = parent.nodes[k + 1]!;
    for (let k = 1; k < seq.length - 1; k++) {
      // A stop keeps its don't-look bit when both its arcs are the parent's.
      const unchanged = parent && parentNext[seq[k - 1]!] === seq[k] && parentNext[seq[k]!] === seq[k + 1];
      if (!unchanged) activate(seq[k]!);
    }
    if (parent) for (const node of parent.nodes) parentNext[node] = -1;
    let changed = false;
    while (queue.length > 0) {
      const a = queue.pop()!;
      queued[a] = 0;
      if (improveFrom(a)) {
        changed = true;
        activate(a);
      }
    }
    for (const node of seq) position[node] = -1;
    if (changed) {
      route.nodes = seq.slice(1, seq.length - 1);
      route.refresh(model, objective);
    }
    return changed;
  };
}

/** False when no time window, shift, capacity or shipment can make a reordering infeasible. */
export function hasOrderConstraints(model: RoutingModel): boolean {
  if (model.dims > 0) return true;
  for (let node = 0; node < model.nodeCount; node++) if (model.role[node] !== 0) return true;
  for (let w = 0; w < model.twStart.length; w++) {
    if (model.twEnd[w] !== Infinity) return true;
  }
  return false;
}

function reverse(list: number[], from: number, to: number): void {
  for (let a = from, b = to; a < b; a++, b--) [list[a], list[b]] = [list[b]!, list[a]!];
}
