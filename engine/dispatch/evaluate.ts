import { isOnSchedule } from '../fleet/schedule.ts';
import { transportModeFor, type LatLng, type MappingProvider, type TransportMode } from '../mapping/mapping-provider.ts';
import type { ExclusionReason } from './dispatch-types.ts';
import type { DriverFacts } from './driver-facts.ts';
import { overlaps, type JobTarget } from './job-target.ts';

export type EligibilityOptions = {
  /** The instant the job is worked (its window's start, else the dispatch time): schedules are read at it. */
  at: Date;
  timezone: string;
  job: JobTarget;
  considerSchedule: boolean;
  considerConflicts: boolean;
  /** Require the driver actor to be `available` (strategies do; the available-drivers list reports it instead). */
  requireAvailable: boolean;
  /** Zone-based only: the zones containing the pickup; a driver needs one of them. */
  pickupZoneIds?: Set<string>;
  /** The request names no vehicle, so the driver needs a default one. */
  requireVehicle?: boolean;
  /** Open jobs the driver would take at once (a whole route's unassigned jobs); 1 when absent. */
  jobCount?: number;
};

/**
 * The first reason a driver cannot take the job, or null when eligible (order: see `EXCLUSION_REASONS`).
 * A worker without a schedule is treated as always on schedule: the office has not restricted their hours.
 */
export function exclusionReason(driver: DriverFacts, options: EligibilityOptions): ExclusionReason | null {
  if (!driver.active) return 'inactive';
  if (options.considerSchedule && driver.schedule && !isOnSchedule(driver.schedule, options.timezone, options.at)) return 'off_schedule';
  const window = options.job.window;
  if (options.considerConflicts && window && driver.busy.some((busy) => overlaps(busy, window))) return 'has_conflict';
  if (!hasRoomFor(driver, options.jobCount ?? 1)) return 'capacity';
  if (options.requireAvailable && driver.availability !== 'available') return 'not_available';
  if (options.pickupZoneIds && !driver.zoneIds.some((zone) => options.pickupZoneIds!.has(zone))) return 'outside_zone';
  if (options.requireVehicle && !driver.defaultVehicleId) return 'no_vehicle';
  return null;
}

/** Room under `max_load` for `jobs` more open jobs; a driver without a `max_load` always has room. */
export function hasRoomFor(driver: DriverFacts, jobs: number): boolean {
  return driver.maxLoad === null || driver.load + jobs <= driver.maxLoad;
}

/** Travel from each driver's last position to a point: meters and whole seconds, null without a position. */
export type Leg = { meters: number; seconds: number } | null;

/**
 * Distances and travel times of the drivers to `target` through the site's mapping provider: one matrix call per
 * transport mode (the driver's default vehicle type; a car without one), so N drivers cost a handful of calls.
 * @returns one leg per driver, in the order given
 */
export async function legsTo(mapping: MappingProvider, drivers: DriverFacts[], target: LatLng | null): Promise<Leg[]> {
  const legs: Leg[] = drivers.map(() => null);
  if (!target) return legs;
  const byMode = new Map<TransportMode, number[]>();
  drivers.forEach((driver, index) => {
    if (!driver.position) return;
    const mode = transportModeFor(driver.vehicleType ?? 'car');
    const list = byMode.get(mode) ?? [];
    list.push(index);
    byMode.set(mode, list);
  });
  for (const [mode, indexes] of byMode) {
    const matrix = await mapping.matrix(indexes.map((i) => drivers[i]!.position!), [target], mode);
    indexes.forEach((driverIndex, row) => {
      legs[driverIndex] = { meters: matrix.distances_meters[row]![0]!, seconds: matrix.durations_seconds[row]![0]! };
    });
  }
  return legs;
}
