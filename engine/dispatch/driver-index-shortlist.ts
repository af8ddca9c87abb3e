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
  const all = drivers.map((_, i) => i);
  if (strategy === 'round-robin' || !target || drivers.length <= perGroup) return all;
  const byLoad = strategy === 'load' || strategy === 'load-balanced';
  const meters = drivers.map((d) => (d.position ? greatCircleMeters(d.position, target) : Number.POSITIVE_INFINITY));
  const keep = new Set<number>();
  const levels = byLoad ? [...new Set(drivers.map((d) => d.load))].sort((a, b) => a - b) : [null];
  for (const level of levels) {
    const groups = new Map<string, number[]>();
    for (const i of all) {
      const driver = drivers[i]!;
      if (level !== null && driver.load !== level) continue;
      if (!driver.position) {
        keep.add(i);
        continue;
      }
      const mode = transportModeFor(driver.vehicleType ?? 'car');
      const list = groups.get(mode) ?? [];
      list.push(i);
      groups.set(mode, list);
    }
    for (const list of groups.values()) {
      list.sort((a, b) => meters[a]! - meters[b]!);
      const limit = meters[list[Math.min(perGroup, list.length) - 1]!]! + ROUNDING_SLACK_METERS;
      for (const i of list) {
        if (meters[i]! > limit) break;
        keep.add(i);
      }
    }
    if (keep.size >= perGroup) break;
  }
  return all.filter((i) => keep.has(i));
}

/** Haversine distance on the sphere the offline provider uses (`@turf/distance`'s radius). */
function greatCircleMeters(a: LatLng, b: LatLng): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_METERS * Math.asin(Math.min(1, Math.sqrt(h)));
}
