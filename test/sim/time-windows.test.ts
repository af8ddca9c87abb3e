import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { offset, type LatLng } from '../../sim/geo.ts';
import { loadLiLim } from '../../sim/li-lim.ts';
import type { Plan, PlannedJob } from '../../sim/plan.ts';
import { SimDatabases } from '../../sim/sim-database.ts';
import { simulateInProcess, type Simulation } from '../../sim/simulate.ts';
import { ADMIN_URL, APP_ROLE } from '../support/postgres.ts';

const databases = new SimDatabases({ adminUrl: ADMIN_URL, appRole: APP_ROLE, template: inject('templateDatabase') });
afterAll(() => databases.close());

const NORTH = 0;
const EAST = Math.PI / 2;
const WEST = -Math.PI / 2;

/** A Li & Lim job: times in seconds of the day; both stops have a window and a service time. */
function job(name: string, createdAt: number, pickup: LatLng, dropoff: LatLng, times: { pickupDue: number; dropoffReady: number; dropoffDue: number; dropoffServiceS: number }): PlannedJob {
  return { name, createdAt, pickup, dropoff, pickupServiceS: 60, pickupReady: createdAt, impossible: null, ...times };
}

/**
 * One driver of an lc101 fleet (at the depot, 60 km/h in straight lines, back to the depot by the end of the shift at
 * 9,000 s) and three jobs, one after the other:
 * - early: picked up at ~120 s, at its drop-off at ~360 s, which opens only at 3,600 s (600 s of service);
 * - tight: its drop-off starts at ~5,180 s, before its due time 5,500 s, and its service ends after it;
 * - far: its pickup 10 km away is reached ~600 s after creation, long after both its due times; then the way home
 *   (~13 km) ends after the shift.
 */
function timeWindowPlan(): Plan {
  const lilim = loadLiLim('lc101');
  const depot = lilim.drivers[0]!.start;
  const p1 = offset(depot, 2000, NORTH);
  const q1 = offset(p1, 3000, EAST);
  const p2 = offset(q1, 1000, WEST);
  const q2 = offset(p2, 1000, WEST);
  const p3 = offset(q2, 10_000, NORTH);
  const q3 = offset(p3, 1000, NORTH);
  return {
    ...lilim,
    drivers: [{ ...lilim.drivers[0]!, shiftEnd: 9000 }],
    jobs: [
      job('early', 0, p1, q1, { pickupDue: 600, dropoffReady: 3600, dropoffDue: 4000, dropoffServiceS: 600 }),
      job('tight', 5000, p2, q2, { pickupDue: 5600, dropoffReady: 5000, dropoffDue: 5500, dropoffServiceS: 600 }),
      job('far', 8000, p3, q3, { pickupDue: 8060, dropoffReady: 8000, dropoffDue: 8120, dropoffServiceS: 60 }),
    ],
  };
}

describe('Li & Lim time windows in a run on the real engine', () => {
  let sim: Simulation;
  beforeAll(async () => {
    sim = await simulateInProcess(timeWindowPlan(), ['team-eta'], { databases, record: true });
  }, 300_000);

  it('a driver early at a drop-off waits for its window to open before working it', () => {
    const completions = sim.recorders[0]!.lines().map((line) => JSON.parse(line) as { type: string; t: number; job?: string }).filter((event) => event.type === 'job_completed');
    expect(completions.map((event) => event.job)).toEqual(['early', 'tight', 'far']);
    // The window opens at 3,600 s and the service takes 600 s, wherever the driver was at 360 s.
    expect(completions[0]!.t).toBe(4200);
  });

  it('deadlines hold at the start of service, and late pickups, deliveries and returns to the depot are counted', () => {
    const { summary } = sim.comparison.strategies['team-eta']!;
    expect(summary.completed).toBe(3);
    // early and tight are on time (tight's service ends after its due time, but started before it); far is not.
    expect(summary.on_time_rate).toBe(0.6667);
    expect({ pickups: summary.late_pickups, deliveries: summary.late_deliveries, depot: summary.late_depot_returns }).toEqual({ pickups: 1, deliveries: 1, depot: 1 });
  });
});
