import type { RoutingModel } from './routing-model.ts';

/** The earliest moment service can start when arriving at `arrival`, or Infinity when every window has closed. */
export function earliestStart(model: RoutingModel, node: number, arrival: number): number {
  const first = model.twFirst[node]!;
  const last = model.twFirst[node + 1]!;
  if (last === first + 1) return arrival <= model.twEnd[first]! ? Math.max(arrival, model.twStart[first]!) : Infinity;
  for (let w = first; w < last; w++) {
    if (arrival <= model.twEnd[w]!) return Math.max(arrival, model.twStart[w]!);
  }
  return Infinity;
}

/**
 * The latest arrival from which service can start by `latestStart`: inside the last window opening by then.
 * -Infinity when none opens in time.
 */
export function latestArrival(model: RoutingModel, node: number, latestStart: number): number {
  const first = model.twFirst[node]!;
  for (let w = model.twFirst[node + 1]! - 1; w >= first; w--) {
    if (model.twStart[w]! <= latestStart) return Math.min(latestStart, model.twEnd[w]!);
  }
  return -Infinity;
}
