import { describe, expect, it } from 'vitest';
import type { DriverFacts } from '../../engine/dispatch/driver-facts.ts';
import { shortlist, SHORTLIST_PER_GROUP } from '../../engine/dispatch/driver-index-shortlist.ts';
import { legsTo } from '../../engine/dispatch/evaluate.ts';
import { rankDrivers, toCandidateScores, type Ranked } from '../../engine/dispatch/select-driver.ts';
import { DECISION_LIST_LIMIT, type Strategy } from '../../engine/dispatch/dispatch-types.ts';
import { createOfflineProvider } from '../../engine/mapping/offline-provider.ts';

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => ((state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
}

const TYPES = ['van', 'car', 'bike', null];

function drivers(count: number, next: () => number): DriverFacts[] {
  return Array.from({ length: count }, (_, i) => ({
    userId: `usr_${String(i).padStart(5, '0')}`, name: `D${i}`, email: `d${i}@x.example`, firstName: null, lastName: null, active: true,
    operationalStatus: 'active', availability: 'available' as const,
    // Some without a position; positions on a coarse grid so that equal distances and equal rounded times occur.
    position: next() < 0.05 ? null : { lat: 48.8 + Math.round(next() * 40) / 400, lng: 2.3 + Math.round(next() * 40) / 400 },
    defaultVehicleId: 'veh_1', vehicleType: TYPES[Math.floor(next() * TYPES.length)]!, teamIds: [], zoneIds: [], maxLoad: null,
    load: Math.floor(next() * 3), schedule: null, busy: [],
  }));
}

async function ranking(strategy: Strategy, list: DriverFacts[], target: { lat: number; lng: number }) {
  const mapping = createOfflineProvider();
  const legs = await legsTo(mapping, list, target);
  return toCandidateScores(rankDrivers(strategy, list.map<Ranked>((facts, i) => ({ facts, leg: legs[i] ?? null })), null).slice(0, DECISION_LIST_LIMIT));
}

describe('dispatch shortlist (measure only the nearest drivers)', () => {
  it('gives the same winner and the same shown candidates as measuring every driver, with the offline provider', async () => {
    const next = random(42);
    for (let round = 0; round < 20; round++) {
      const list = drivers(400, next);
      const target = { lat: 48.8 + next() * 0.1, lng: 2.3 + next() * 0.1 };
      for (const strategy of ['eta', 'load-balanced', 'priority'] as Strategy[]) {
        const kept = shortlist(strategy, list, target).map((i) => list[i]!);
        expect(kept.length).toBeLessThan(list.length);
        expect(await ranking(strategy, kept, target)).toEqual(await ranking(strategy, list, target));
      }
    }
  });

  it('keeps everyone for round-robin, without a pickup point, or when there are few drivers', () => {
    const list = drivers(200, random(7));
    expect(shortlist('round-robin', list, { lat: 48.85, lng: 2.35 })).toHaveLength(200);
    expect(shortlist('eta', list, null)).toHaveLength(200);
    expect(shortlist('eta', list.slice(0, SHORTLIST_PER_GROUP), { lat: 48.85, lng: 2.35 })).toHaveLength(SHORTLIST_PER_GROUP);
  });
});

/** Driver `i` (otherwise random) at a given point. */
const driverAt = (lat: number, lng: number, i: number): DriverFacts => ({ ...drivers(1, random(i))[0]!, userId: `usr_${i}`, vehicleType: 'car', position: { lat, lng } });

describe('dispatch shortlist at the far side of the globe', () => {
  it('keeps a driver at the exact antipode of the pickup when the K-th driver is within the slack of it, as distances in meters did', () => {
    // Both drivers are about half the globe away; the haversine of the exact antipode rounds to just above 1, which
    // the distance in meters clamped to half the globe (so within the K-th's distance + slack, and kept).
    const list = [driverAt(-12, -177.65, 1), driverAt(-11.9995, -177.65, 2)];
    expect(shortlist('eta', list, { lat: 12, lng: 2.35 }, 1)).toEqual([0, 1]);
  });
});
