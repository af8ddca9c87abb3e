import { transportModeFor, type LatLng } from '../mapping/mapping-provider.ts';
import type { Strategy } from './dispatch-types.ts';
import type { DriverFacts } from './driver-facts.ts';

/** Drivers measured through the mapping provider per group (transport mode, and load level for the load strategies). */
export const SHORTLIST_PER_GROUP = 32;
/** Extra straight-line distance kept past the K-th driver: whole-second rounding can tie a slightly farther driver. */
const ROUNDING_SLACK_METERS = 150;
const EARTH_RADIUS_METERS = 6_371_008.8;

/**
 * The eligible drivers worth measuring to the pickup, by index, in their original order. Ranking by the strategy
 * only ever needs the best few, so instead of a provider matrix over every driver: the great-circle distance of
 * each driver (cheap arithmetic), then per transport mode the nearest K (plus any within the rounding slack of
 * the K-th), and every driver without a position (they cost no matrix cell and rank after the measured ones).
 * Load strategies rank by load first: groups are (load, mode), lowest load levels first, until K drivers are in.
 *
 * Why this cannot change the winner nor the shown candidates (K ≥ 25, the decision list limit) with the offline
 * provider: its travel time is the great-circle distance × the mode's detour factor ÷ the mode's speed, so within
 * one mode it never decreases with the great-circle distance; the best of every mode (and its next K − 1) are kept.
 * With a road engine (OSRM and the like) a driver 2 km away across a river can take longer than one 3 km away on
 * the same bank: a K-th-by-distance cut can then drop the true fastest driver when more than K drivers are nearer
 * as the crow flies. A larger K bounds that risk; the recorded decision still shows the times actually measured.
 */
export function shortlist(strategy: Strategy, drivers: DriverFacts[], target: LatLng | null, perGroup = SHORTLIST_PER_GROUP): number[] {
  const count = drivers.length;
  if (strategy === 'round-robin' || !target || count <= perGroup) return drivers.map((_, i) => i);
  const byLoad = strategy === 'load' || strategy === 'load-balanced';
  // One pass: each driver's distance and transport mode (-1: no position, always kept). Drivers of one fleet mostly
  // share a vehicle type, so the mode of the previous driver's type is reused.
  const meters = new Float64Array(count);
  const modes = new Int8Array(count);
  const modeNames: string[] = [];
  const loads = new Set<number>();
  let lastType: string | null | undefined;
  let lastMode = -1;
  for (let i = 0; i < count; i++) {
    const driver = drivers[i]!;
    if (byLoad) loads.add(driver.load);
    const position = driver.position;
    if (!position) {
      meters[i] = Number.POSITIVE_INFINITY;
      modes[i] = -1;
      continue;
    }
    meters[i] = greatCircleMeters(position, target);
    if (driver.vehicleType !== lastType) {
      lastType = driver.vehicleType;
      const name = modeOf(lastType);
      lastMode = modeNames.indexOf(name);
      if (lastMode < 0) lastMode = modeNames.push(name) - 1;
    }
    modes[i] = lastMode;
  }
  const keep = new Uint8Array(count);
  let kept = 0;
  const levels = byLoad ? [...loads].sort((a, b) => a - b) : [null];
  for (const level of levels) {
    const groups = new Map<number, number[]>();
    for (let i = 0; i < count; i++) {
      if (level !== null && drivers[i]!.load !== level) continue;
      const mode = modes[i]!;
      if (mode < 0) {
        if (!keep[i]) {
          keep[i] = 1;
          kept += 1;
        }
        continue;
      }
      const list = groups.get(mode);
      if (list) list.push(i);
      else groups.set(mode, [i]);
    }
    for (const list of groups.values()) {
      const limit = kthSmallest(Float64Array.from(list, (i) => meters[i]!), Math.min(perGroup, list.length) - 1) + ROUNDING_SLACK_METERS;
      for (const i of list) {
        if (meters[i]! > limit || keep[i]) continue;
        keep[i] = 1;
        kept += 1;
      }
    }
    if (kept >= perGroup) break;
  }
  const chosen: number[] = [];
  for (let i = 0; i < count; i++) if (keep[i]) chosen.push(i);
  return chosen;
}

const modesByType = new Map<string, string>();
/** The transport mode of a vehicle type (a car without one), remembered: it is asked once per driver per decision. */
function modeOf(vehicleType: string | null): string {
  const type = vehicleType ?? 'car';
  let mode = modesByType.get(type);
  if (mode === undefined) {
    mode = transportModeFor(type);
    modesByType.set(type, mode);
  }
  return mode;
}

/** The k-th smallest value (from 0) of `values` (reordered in place): quickselect, linear on average. */
function kthSmallest(values: Float64Array, k: number): number {
  let low = 0;
  let high = values.length - 1;
  while (low < high) {
    const pivot = values[(low + high) >>> 1]!;
    let i = low;
    let j = high;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const swap = values[i]!;
        values[i] = values[j]!;
        values[j] = swap;
        i++;
        j--;
      }
    }
    if (k <= j) high = j;
    else if (k >= i) low = i;
    else return values[k]!;
  }
  return values[k]!;
}

/** Haversine distance on the sphere the offline provider uses (`@turf/distance`'s radius). */
function greatCircleMeters(a: LatLng, b: LatLng): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_METERS * Math.asin(Math.min(1, Math.sqrt(h)));
}
