import { haversineM, insideRing, offset, round6, type LatLng } from './geo.ts';
import { createRandom, type Random } from './random.ts';
import type { Placement, Scenario } from './scenario.schema.ts';

/** One simulated driver, named `d001`... so results never carry database ids (which differ per run). */
export type PlannedDriver = { name: string; start: LatLng; shiftStart: number; shiftEnd: number };

/** One job of the day; times are seconds after the day starts. */
export type PlannedJob = {
  name: string;
  createdAt: number;
  pickup: LatLng;
  dropoff: LatLng;
  pickupServiceS: number;
  dropoffServiceS: number;
  /** The pickup cannot start before this (a Li & Lim ready time; else the creation time). */
  pickupReady: number;
  /** The pickup's service must start by then to be on time. */
  pickupDue: number;
  /** The drop-off cannot start before this (a Li & Lim delivery's ready time; else the creation time). */
  dropoffReady: number;
  /** The drop-off's service must start by then to be on time. */
  dropoffDue: number;
  /** Why no driver of this fleet can do it, decided before the run (null: reachable). */
  impossible: string | null;
};

/** Everything a run needs that does not depend on the strategy: the same plan is replayed for each strategy. */
export type Plan = {
  scenario: Scenario;
  seed: number;
  drivers: PlannedDriver[];
  jobs: PlannedJob[];
  bestKnown?: { distanceKm: number; vehicles: number; instance: string };
  /** Recorded GPS traces to replay, by driver name: [seconds after the day starts, lat, lng]. */
  tracks?: Record<string, [number, number, number][]>;
};

/** Draws the fleet and the day's demand from the scenario; the same seed always gives the same plan. */
export function generatePlan(scenario: Scenario, seed: number): Plan {
  const random = createRandom(seed);
  const area = areaOf(scenario);
  const drivers = generateDrivers(scenario, area, random.fork('fleet'));
  const jobs = generateJobs(scenario, area, random.fork('demand'));
  return { scenario, seed, drivers, jobs: markImpossible(scenario, area, drivers, jobs) };
}

type Area = { bbox: [number, number, number, number]; ring: [number, number][] | null };

function areaOf(scenario: Scenario): Area {
  if ('bbox' in scenario.area) return { bbox: scenario.area.bbox, ring: null };
  const ring = scenario.area.polygon;
  const lngs = ring.map((p) => p[0]);
  const lats = ring.map((p) => p[1]);
  return { bbox: [Math.min(...lngs), Math.min(...lats), Math.max(...lngs), Math.max(...lats)], ring };
}

function uniformIn(area: Area, random: Random): LatLng {
  const [minLng, minLat, maxLng, maxLat] = area.bbox;
  for (let attempt = 0; attempt < 1000; attempt += 1) {
    const point = { lat: random.between(minLat, maxLat), lng: random.between(minLng, maxLng) };
    if (!area.ring || insideRing(point, area.ring)) return point;
  }
  throw new Error('the scenario area is too thin to sample from');
}

function place(placement: Placement, area: Area, random: Random, pickup?: LatLng): LatLng {
  if (placement.kind === 'uniform') return uniformIn(area, random);
  if (placement.kind === 'near_pickup') return clampTo(area, offset(pickup!, Math.sqrt(random.next()) * placement.radius_m, random.between(0, 2 * Math.PI)));
  const total = placement.hotspots.reduce((sum, h) => sum + h.weight, 0);
  let pick = random.next() * total;
  const hotspot = placement.hotspots.find((h) => (pick -= h.weight) < 0) ?? placement.hotspots.at(-1)!;
  return clampTo(area, offset(hotspot, Math.sqrt(random.next()) * hotspot.radius_m, random.between(0, 2 * Math.PI)));
}

function clampTo(area: Area, point: LatLng): LatLng {
  const [minLng, minLat, maxLng, maxLat] = area.bbox;
  return { lat: Math.min(maxLat, Math.max(minLat, point.lat)), lng: Math.min(maxLng, Math.max(minLng, point.lng)) };
}

function generateDrivers(scenario: Scenario, area: Area, random: Random): PlannedDriver[] {
  const { fleet } = scenario;
  const totalShare = fleet.shifts.reduce((sum, s) => sum + s.share, 0);
  const drivers: PlannedDriver[] = [];
  for (let i = 0; i < fleet.drivers; i += 1) {
    // Shifts by share, in fleet order, so driver d001 is always on the first shift.
    let position = ((i + 0.5) / fleet.drivers) * totalShare;
    const shift = fleet.shifts.find((s) => (position -= s.share) < 0) ?? fleet.shifts.at(-1)!;
    const depot = fleet.depots && fleet.depots.length > 0 ? fleet.depots[i % fleet.depots.length]! : null;
    const start = fleet.start === 'depots' && depot ? depot : uniformIn(area, random);
    drivers.push({ name: `d${String(i + 1).padStart(3, '0')}`, start: round6(start), shiftStart: shift.start_s, shiftEnd: shift.end_s });
  }
  return drivers;
}

/** Arrival times by inverse CDF over the weighted slices of the day, sorted. */
function arrivalTimes(scenario: Scenario, count: number, random: Random): number[] {
  const weights = scenario.demand.arrival_weights;
  const total = weights.reduce((sum, w) => sum + w, 0);
  const slice = scenario.day.duration_s / weights.length;
  const times: number[] = [];
  for (let i = 0; i < count; i += 1) {
    let pick = random.next() * total;
    let index = weights.findIndex((w) => (pick -= w) < 0);
    if (index < 0) index = weights.length - 1;
    times.push(Math.floor((index + random.next()) * slice));
  }
  return times.sort((a, b) => a - b);
}

function generateJobs(scenario: Scenario, area: Area, random: Random): PlannedJob[] {
  const { demand } = scenario;
  const unreachable = demand.unreachable_jobs ?? 0;
  const times = arrivalTimes(scenario, demand.jobs + unreachable, random.fork('arrivals'));
  // Which arrivals are the deliberately unreachable ones: spread evenly through the day.
  const farEvery = unreachable > 0 ? Math.floor(times.length / unreachable) : 0;
  return times.map((createdAt, i) => {
    const far = farEvery > 0 && i % farEvery === farEvery - 1 && Math.floor(i / farEvery) < unreachable;
    const pickup = far ? offset(uniformIn(area, random), 250_000, random.between(0, 2 * Math.PI)) : place(demand.pickup, area, random);
    const dropoff = far ? offset(pickup, 2_000, random.between(0, 2 * Math.PI)) : place(demand.dropoff, area, random, pickup);
    return {
      name: `j${String(i + 1).padStart(5, '0')}`,
      createdAt,
      pickup: round6(pickup),
      dropoff: round6(dropoff),
      pickupServiceS: Math.round(random.between(...demand.service_s.pickup)),
      dropoffServiceS: Math.round(random.between(...demand.service_s.dropoff)),
      pickupReady: createdAt,
      pickupDue: createdAt + demand.pickup_window_s,
      dropoffReady: createdAt,
      dropoffDue: createdAt + demand.dropoff_window_s,
      impossible: null,
    };
  });
}

/** Why a job no driver's shift covers is impossible: drivers past their shift stay only for jobs created during it. */
export const CREATED_AFTER_LAST_SHIFT = 'created after the last shift ended';

/**
 * Decides before the run which jobs no driver of this fleet can do (a pickup beyond every driver's range of the
 * area, or a job created after the last shift), so the report names them instead of silently missing them.
 */
export function markImpossible(scenario: Scenario, area: Area | null, drivers: PlannedDriver[], jobs: PlannedJob[]): PlannedJob[] {
  const lastShiftEnd = Math.max(...drivers.map((d) => d.shiftEnd));
  const range = scenario.fleet.acceptance.max_pickup_m;
  const bbox = area?.bbox ?? areaOf(scenario).bbox;
  return jobs.map((job) => {
    const nearest = clampTo({ bbox, ring: null }, job.pickup);
    const outOfRange = haversineM(nearest, job.pickup) * scenario.fleet.detour_factor > range;
    const impossible = outOfRange ? 'pickup beyond every driver\'s range' : job.createdAt >= lastShiftEnd ? CREATED_AFTER_LAST_SHIFT : null;
    return { ...job, impossible };
  });
}
