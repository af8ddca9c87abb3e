import { haversineM, type LatLng } from './geo.ts';
import type { Scenario } from './scenario.schema.ts';

/** Meters a driver drives between two points: the straight line stretched by the scenario's detour factor. */
export function drivingM(scenario: Scenario, from: LatLng, to: LatLng): number {
  return haversineM(from, to) * scenario.fleet.detour_factor;
}

/** Whole seconds (at least one) to drive `meters` setting off at `t`, at the speed of that time of day. */
export function drivingS(scenario: Scenario, meters: number, t: number): number {
  return Math.max(1, Math.round(meters / speedMps(scenario, t)));
}

function speedMps(scenario: Scenario, t: number): number {
  const profile = scenario.fleet.speed_profile;
  let kmh = profile[0]!.kmh;
  for (const step of profile) if (step.from_s <= t) kmh = step.kmh;
  return kmh / 3.6;
}
