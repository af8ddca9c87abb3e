import { transportModeFor, type LatLng } from '../mapping/mapping-provider.ts';
import type { Strategy } from './dispatch-types.ts';
import type { DriverFacts } from './driver-facts.ts';

/** Drivers measured through the mapping provider per group (transport mode, and load level for the load strategies). */
export const SHORTLIST_PER_GROUP = 32;
/** Extra straight-line distance kept past the K-th driver: whole-second rounding can tie a slightly farther driver. */
const ROUNDING_SLACK_METERS = 150;
const EARTH_RADIUS_METERS = 6_371_008.8;
/** The group of drivers without a known position (transport modes are numbered below it). */
const NO_POSITION = 15;

/**
 * The eligible drivers worth measuring to the pickup, by index, in their original order. Ranking by the strategy
 * only ever needs the best few, so instead of a provider matrix over every driver: the great-circle distance of
 * each driver (cheap arithmetic), then per transport mode the nearest K (plus any within the rounding slack of
 * the K-th), and every driver without a position (they cost no matrix cell and rank after the measured ones).
 * Load strategies rank by load first: groups are (load, mode), lowest load levels first, until K drivers are in.
 *
 * Why this cannot change the winner nor the shown candidates (K ≥ the decision list limit) with the offline
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
  // One pass: each driver's distance and group. The distance is kept as the haversine of the central angle, which
  // grows with it: the arcsine and square root that make it meters are taken once, for the K-th driver's threshold.
  // A group is a transport mode (or "no position": those cost no matrix cell and are always kept), and for the load
  // strategies a load level too. Drivers of one fleet mostly share a vehicle type, so the mode of the previous
  // driver's type is reused. Typed arrays and plain loops: this runs over every eligible driver.
  const { haversines, groups, keep } = scratchFor(count);
  const modeNames: string[] = [];
  const groupKeys = new Map<number, number>();
  const groupLoads: number[] = [];
  const groupSizes: number[] = [];
  const unplaced: boolean[] = [];
  const target$ = toRadians(target);
  let lastType: string | null | undefined;
  let lastMode = -1;
  for (let i = 0; i < count; i++) {
    const driver = drivers[i]!;
    const position = driver.position;
    let mode = NO_POSITION;
    if (position) {
      haversines[i] = haversineOf(position, target$);
      if (driver.vehicleType !== lastType) {
        lastType = driver.vehicleType;
        const name = modeOf(lastType);
        lastMode = modeNames.indexOf(name);
        if (lastMode < 0) lastMode = modeNames.push(name) - 1;
      }
      mode = lastMode;
    }
    const load = byLoad ? driver.load : 0;
    // Modes are few (< NO_POSITION): one number keys a (load, mode) group.
    const key = load * (NO_POSITION + 1) + mode;
    let group = groupKeys.get(key);
    if (group === undefined) {
      group = groupLoads.push(load) - 1;
      groupSizes.push(0);
      unplaced.push(mode === NO_POSITION);
      groupKeys.set(key, group);
    }
    groupSizes[group]! += 1;
    groups[i] = group;
  }
  // Lowest load level first (one level only for eta): stop once a level has brought the count to K.
  let kept = 0;
  const levels = [...new Set(groupLoads)].sort((a, b) => a - b);
  for (const level of levels) {
    for (let group = 0; group < groupLoads.length; group++) {
      if (groupLoads[group] !== level) continue;
      let limit = Number.POSITIVE_INFINITY;
      if (!unplaced[group]) {
        const values = haversines.subarray(count, count + groupSizes[group]!);
        let n = 0;
        for (let i = 0; i < count; i++) if (groups[i] === group) values[n++] = haversines[i]!;
        limit = haversineAt(metersOf(kthSmallest(values, Math.min(perGroup, n) - 1)) + ROUNDING_SLACK_METERS);
      }
      for (let i = 0; i < count; i++) {
        if (groups[i] !== group || haversines[i]! > limit || keep[i]) continue;
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

let scratch = { haversines: new Float64Array(0), groups: new Int32Array(0), keep: new Uint8Array(0) };
/**
 * Work arrays reused from one decision to the next (a shortlist runs to its end without awaiting, so decisions never
 * share them): allocating them per decision was most of the garbage a decision made. `haversines` has room for a copy.
 */
function scratchFor(count: number): typeof scratch {
  if (scratch.groups.length < count) {
    const size = Math.max(count, scratch.groups.length * 2);
    scratch = { haversines: new Float64Array(size * 2), groups: new Int32Array(size), keep: new Uint8Array(size) };
  }
  scratch.keep.fill(0, 0, count);
  return scratch;
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

type Radians = { lat: number; lng: number; cosLat: number };
const RAD = Math.PI / 180;
const toRadians = (point: LatLng): Radians => ({ lat: point.lat * RAD, lng: point.lng * RAD, cosLat: Math.cos(point.lat * RAD) });

/**
 * The haversine of the central angle between `a` and `b` (the target's trigonometry done once): 0 for the same point,
 * 1 for antipodes, and larger for every farther point, so drivers compare by it as by their distance.
 */
function haversineOf(a: LatLng, b: Radians): number {
  const lat = a.lat * RAD;
  const sinLat = Math.sin((b.lat - lat) / 2);
  const sinLng = Math.sin((b.lng - a.lng * RAD) / 2);
  return sinLat * sinLat + Math.cos(lat) * b.cosLat * sinLng * sinLng;
}

/** The great-circle distance of a haversine on the sphere the offline provider uses (`@turf/distance`'s radius). */
const metersOf = (haversine: number): number => 2 * EARTH_RADIUS_METERS * Math.asin(Math.min(1, Math.sqrt(haversine)));

/**
 * The haversine of a great-circle distance (the inverse of {@link metersOf}). Past half the globe, infinity: every
 * driver is within it, including one whose haversine rounds to just above 1 (near the antipode), which
 * {@link metersOf} clamps to half the globe.
 */
function haversineAt(meters: number): number {
  const half = meters / (2 * EARTH_RADIUS_METERS);
  if (half >= Math.PI / 2) return Number.POSITIVE_INFINITY;
  const sin = Math.sin(half);
  return sin * sin;
}
