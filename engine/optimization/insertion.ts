import type { RouteState } from './route-state.ts';
import type { RoutingModel } from './routing-model.ts';
import { earliestStart } from './time-windows.ts';
import type { SeededRandom } from './seeded-random.ts';

/** The cheapest place found so far: insert `node` after position `after` (and its dropoff after `dropAfter`). */
export type InsertionChoice = { delta: number; vehicle: number; after: number; dropAfter: number };

export const noChoice = (): InsertionChoice => ({ delta: Infinity, vehicle: -1, after: -1, dropAfter: -1 });

/**
 * Tries every position of a visit in the route in O(1) each (forward start times, backward latest arrivals,
 * prefix/suffix load maxima). Each position is skipped with probability `blink` (SISR's "blinks"), which keeps
 * the greedy insertion from always making the same choice.
 */
export function tryVisit(model: RoutingModel, route: RouteState, node: number, blink: number, random: SeededRandom, best: InsertionChoice): void {
  const { dims, location: loc, service, duration, arcCost, locationCount: n } = model;
  const fixed = route.size === 0 ? model.vehicleFixedCost : 0;
  const u = loc[node]! * n;
  for (let after = 0; after <= route.size; after++) {
    const a = route.nodeAt(model, after);
    const b = route.nodeAt(model, after + 1);
    const la = loc[a]! * n;
    const lb = loc[b]!;
    const delta = fixed + arcCost[la + loc[node]!]! + arcCost[u + lb]! - arcCost[la + lb]!;
    if (delta >= best.delta) continue;
    if (blink > 0 && random.next() < blink) continue;
    if (dims > 0 && !visitFits(model, route, node, after)) continue;
    const startU = earliestStart(model, node, route.start[after]! + service[a]! + duration[la + loc[node]!]!);
    if (startU === Infinity) continue;
    if (startU + service[node]! + duration[u + lb]! > route.latest[after + 1]!) continue;
    best.delta = delta;
    best.vehicle = route.vehicle;
    best.after = after;
    best.dropAfter = -1;
  }
}

/**
 * Tries every (pickup, dropoff) position pair with the pickup first: for each pickup position, walks forward
 * once, pushing later service starts and the extra load, and stops as soon as a window or the capacity breaks.
 */
export function tryShipment(model: RoutingModel, route: RouteState, pickup: number, blink: number, random: SeededRandom, best: InsertionChoice): void {
  const { location: loc, service, duration, arcCost, locationCount: n } = model;
  const dropoff = pickup + 1;
  const fixed = route.size === 0 ? model.vehicleFixedCost : 0;
  const lp = loc[pickup]!;
  const ld = loc[dropoff]!;
  for (let after = 0; after <= route.size; after++) {
    const a = route.nodeAt(model, after);
    const b = route.nodeAt(model, after + 1);
    const la = loc[a]!;
    const lb = loc[b]!;
    if (!loadFits(model, route, after, pickup)) continue;
    const startP = earliestStart(model, pickup, route.start[after]! + service[a]! + duration[la * n + lp]!);
    if (startP === Infinity) continue;
    const leaveP = startP + service[pickup]!;
    const pickupDelta = fixed + arcCost[la * n + lp]! - arcCost[la * n + lb]!;
    // Dropoff right after the pickup.
    const direct = pickupDelta + arcCost[lp * n + ld]! + arcCost[ld * n + lb]!;
    if (direct < best.delta && !(blink > 0 && random.next() < blink)) {
      const startD = earliestStart(model, dropoff, leaveP + duration[lp * n + ld]!);
      if (startD !== Infinity && startD + service[dropoff]! + duration[ld * n + lb]! <= route.latest[after + 1]!) {
        Object.assign(best, { delta: direct, vehicle: route.vehicle, after, dropAfter: after });
      }
    }
    // Dropoff later: walk the route after the pickup with the pushed times.
    let leave = leaveP;
    let previousLoc = lp;
    const splitDelta = pickupDelta + arcCost[lp * n + lb]!;
    for (let k = after + 1; k <= route.size; k++) {
      const node = route.nodeAt(model, k);
      const lk = loc[node]!;
      const arrival = leave + duration[previousLoc * n + lk]!;
      if (arrival > route.latest[k]! || !loadFits(model, route, k, pickup)) break;
      leave = earliestStart(model, node, arrival) + service[node]!;
      previousLoc = lk;
      const next = route.nodeAt(model, k + 1);
      const ln = loc[next]!;
      const delta = splitDelta + arcCost[lk * n + ld]! + arcCost[ld * n + ln]! - arcCost[lk * n + ln]!;
      if (delta >= best.delta || (blink > 0 && random.next() < blink)) continue;
      const startD = earliestStart(model, dropoff, leave + duration[lk * n + ld]!);
      if (startD === Infinity || startD + service[dropoff]! + duration[ld * n + ln]! > route.latest[k + 1]!) continue;
      Object.assign(best, { delta, vehicle: route.vehicle, after, dropAfter: k });
    }
  }
}

/** A visit after position `after`: its delivery rides from the start, its pickup to the end. */
function visitFits(model: RoutingModel, route: RouteState, node: number, after: number): boolean {
  const { dims, startLoad, demand, capacity } = model;
  for (let d = 0; d < dims; d++) {
    const limit = capacity[route.vehicle * dims + d]!;
    const delivery = startLoad[node * dims + d]!;
    const pickup = demand[node * dims + d]! + delivery;
    if (route.prefixMax[after * dims + d]! + delivery > limit + 1e-9) return false;
    if (route.suffixMax[after * dims + d]! + pickup > limit + 1e-9) return false;
  }
  return true;
}

/** The shipment's amount on board when leaving position k. */
function loadFits(model: RoutingModel, route: RouteState, k: number, pickup: number): boolean {
  const { dims, demand, capacity } = model;
  for (let d = 0; d < dims; d++) {
    if (route.load[k * dims + d]! + demand[pickup * dims + d]! > capacity[route.vehicle * dims + d]! + 1e-9) return false;
  }
  return true;
}
