import { readFileSync } from 'node:fs';
import path from 'node:path';
import { METERS_PER_DEGREE, round6, type LatLng } from './geo.ts';
import type { Plan, PlannedJob } from './plan.ts';
import type { Scenario } from './scenario.schema.ts';

/** Where the public instances live (issue 7): `../shared/bench-data/routing/pdptw/` from the repository. */
export const PDPTW_DIR = process.env.SIM_PDPTW_DIR ?? path.resolve(import.meta.dirname, '../../shared/bench-data/routing/pdptw');

/** Li & Lim coordinates are abstract units; one unit becomes one kilometre as `haversineM` measures it. */
const KM_PER_DEGREE = METERS_PER_DEGREE / 1000;
/**
 * Where unit (0, 0) lies. The instances span 0 to 100 units, so their middle (y = 50) sits on the equator, where a
 * degree of longitude is as long as one of latitude (to within 0.003% up to half a degree from it): one unit is one
 * kilometre in both directions, and straight-line distances are the instance's Euclidean ones.
 */
const ORIGIN: LatLng = { lat: -50 / KM_PER_DEGREE, lng: 10 };
/** One time unit is one minute: at 60 km/h a vehicle covers one unit per unit, as the instances assume. */
const SPEED_KMH = 60;

type Row = { id: number; x: number; y: number; demand: number; ready: number; due: number; service: number; pickup: number; delivery: number };

function toPoint(x: number, y: number): LatLng {
  return round6({ lat: ORIGIN.lat + y / KM_PER_DEGREE, lng: ORIGIN.lng + x / KM_PER_DEGREE });
}

/**
 * Turns a Li & Lim PDPTW instance into a plan: the vehicles start at the depot, each pickup/delivery pair becomes a
 * job released when its pickup opens (online dispatch cannot know jobs earlier), service times and both stops' time
 * windows kept (a driver early at a stop waits for it to open; a due time bounds the start of service), travel
 * at one unit per minute in straight lines (detour 1), so the distance driven compares with the best-known plan.
 * The jobs are the instance's; `seed` (default 0) draws only the drivers' behaviour (pool claim delays).
 */
export function loadLiLim(instance: string, overrides: { drivers?: number; seed?: number } = {}): Plan {
  const text = readFileSync(path.join(PDPTW_DIR, `${instance}.txt`), 'utf8');
  const bks = JSON.parse(readFileSync(path.join(PDPTW_DIR, 'BKS.json'), 'utf8')) as Record<string, { best_known_cost: number; solved_with_vehicles: number; vehicles: number }>;
  const known = bks[instance];
  if (!known) throw new Error(`no best-known solution for ${instance} in BKS.json`);
  const lines = text.trim().split('\n').map((line) => line.trim().split(/\s+/).map(Number));
  const [vehicles] = lines[0]!;
  const rows: Row[] = lines.slice(1).map(([id, x, y, demand, ready, due, service, pickup, delivery]) => ({ id: id!, x: x!, y: y!, demand: demand!, ready: ready!, due: due!, service: service!, pickup: pickup!, delivery: delivery! }));
  const depot = rows[0]!;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const minute = 60;
  const jobs: PlannedJob[] = rows
    .filter((r) => r.id !== 0 && r.delivery > 0)
    .sort((a, b) => a.ready - b.ready || a.id - b.id)
    .map((pickup, i) => {
      const delivery = byId.get(pickup.delivery)!;
      return {
        name: `j${String(i + 1).padStart(5, '0')}`,
        createdAt: pickup.ready * minute,
        pickup: toPoint(pickup.x, pickup.y),
        dropoff: toPoint(delivery.x, delivery.y),
        pickupServiceS: pickup.service * minute,
        dropoffServiceS: delivery.service * minute,
        pickupReady: pickup.ready * minute,
        pickupDue: pickup.due * minute,
        dropoffReady: delivery.ready * minute,
        dropoffDue: delivery.due * minute,
        impossible: null,
      };
    });
  const drivers = overrides.drivers ?? vehicles!;
  const horizonS = depot.due * minute;
  const scenario: Scenario = {
    name: `lilim-${instance}`,
    description: `Li & Lim PDPTW instance ${instance} (${jobs.length} jobs), online: each job is released when its pickup opens.`,
    day: { start: '2026-03-06T06:00:00Z', duration_s: horizonS },
    area: { bbox: [ORIGIN.lng - 1, ORIGIN.lat - 1, ORIGIN.lng + 2, ORIGIN.lat + 2] },
    fleet: {
      drivers,
      shifts: [{ start_s: 0, end_s: horizonS, share: 1 }],
      start: 'depots',
      depots: [toPoint(depot.x, depot.y)],
      vehicle: 'car',
      speed_profile: [{ from_s: 0, kmh: SPEED_KMH }],
      detour_factor: 1,
      acceptance: { offer_accept_rate: 1, offer_response_s: [0, 0], pool_claim_delay_s: [0, 5], pool_radius_m: 200_000, max_pickup_m: 1_000_000 },
      pay: { per_job_cents: 100, per_km_cents: 10 },
      return_to_depot: true,
    },
    demand: {
      jobs: jobs.length,
      arrival_weights: [1],
      pickup: { kind: 'uniform' },
      dropoff: { kind: 'uniform' },
      // The widest pickup window of the instance (what the report's wait chart spans); jobs carry their own.
      pickup_window_s: Math.max(1, ...jobs.map((job) => job.pickupDue - job.pickupReady)),
      dropoff_window_s: 1,
      service_s: { pickup: [0, 0], dropoff: [0, 0] },
    },
    site: { require_confirmation: false, retry_s: 60, max_returns: 1000 },
  };
  const depotPoint = toPoint(depot.x, depot.y);
  return {
    scenario,
    seed: overrides.seed ?? 0,
    drivers: Array.from({ length: drivers }, (_, i) => ({ name: `d${String(i + 1).padStart(3, '0')}`, start: depotPoint, shiftStart: 0, shiftEnd: horizonS })),
    jobs,
    bestKnown: { distanceKm: known.best_known_cost, vehicles: known.solved_with_vehicles, instance },
  };
}
