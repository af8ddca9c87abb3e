import { describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { decide } from '../../engine/dispatch/decide.ts';
import type { DriverFacts } from '../../engine/dispatch/driver-facts.ts';
import { createMappingProvider } from '../../engine/mapping/create-mapping-provider.ts';
import { exclusionReason } from '../../engine/dispatch/evaluate.ts';
import { overlaps, type JobTarget } from '../../engine/dispatch/job-target.ts';
import { rankDrivers, type Ranked } from '../../engine/dispatch/select-driver.ts';

function driver(userId: string, overrides: Partial<DriverFacts> = {}): DriverFacts {
  return {
    userId, name: userId, email: `${userId}@x.example`, firstName: null, lastName: null, active: true, operationalStatus: 'active',
    availability: 'available', position: { lat: 48.85, lng: 2.35 }, defaultVehicleId: 'veh_1', vehicleType: 'van', teamIds: [], zoneIds: [],
    maxLoad: null, load: 0, schedule: null, busy: [], ...overrides,
  };
}
const ranked = (facts: DriverFacts, seconds: number | null): Ranked => ({ facts, leg: seconds === null ? null : { meters: seconds * 10, seconds } });
const ids = (list: Ranked[]) => list.map((r) => r.facts.userId);

const JOB: JobTarget = { id: 'job_1', phase: 'unassigned', version: 1, driverUserId: null, routeId: null, zoneOverride: false, pickup: null, points: [], window: { start: 1000, end: 2000 }, deadline: null, createdAt: 0, bannedZones: [], activeDispatches: 0 };
const OPTIONS = { at: new Date('2030-01-07T10:00:00Z'), timezone: 'UTC', job: JOB, considerSchedule: true, considerConflicts: true, requireAvailable: true };

describe('dispatch strategies', () => {
  it('eta ranks by travel time, drivers without a position last, then load, then driver id', () => {
    const list = [ranked(driver('usr_d', { load: 1 }), 60), ranked(driver('usr_c'), 60), ranked(driver('usr_b'), null), ranked(driver('usr_a'), 120), ranked(driver('usr_e'), 60)];
    expect(ids(rankDrivers('eta', list, null))).toEqual(['usr_c', 'usr_e', 'usr_d', 'usr_a', 'usr_b']);
  });

  it('load ranks by open jobs, then travel time, then driver id', () => {
    const list = [ranked(driver('usr_a', { load: 2 }), 10), ranked(driver('usr_b', { load: 0 }), 300), ranked(driver('usr_c', { load: 0 }), 30), ranked(driver('usr_d', { load: 0 }), 30)];
    expect(ids(rankDrivers('load-balanced', list, null))).toEqual(['usr_c', 'usr_d', 'usr_b', 'usr_a']);
  });

  it('round-robin starts after the cursor and wraps around, whatever the input order', () => {
    const list = ['usr_c', 'usr_a', 'usr_e', 'usr_b', 'usr_d'].map((id) => ranked(driver(id), null));
    expect(ids(rankDrivers('round-robin', list, null))[0]).toBe('usr_a');
    expect(ids(rankDrivers('round-robin', list, 'usr_c'))).toEqual(['usr_d', 'usr_e', 'usr_a', 'usr_b', 'usr_c']);
    expect(ids(rankDrivers('round-robin', list, 'usr_e'))[0]).toBe('usr_a');
    // A cursor on a driver who left the scope still moves on to the next id.
    expect(ids(rankDrivers('round-robin', list, 'usr_bb'))[0]).toBe('usr_c');
  });

  it('reports the first reason a driver is left out, in the documented order', () => {
    const offWeek = { weekly: [], exceptions: [] };
    expect(exclusionReason(driver('a', { active: false, schedule: offWeek }), OPTIONS)).toBe('inactive');
    expect(exclusionReason(driver('a', { schedule: offWeek, busy: [{ start: 1500, end: 2500 }] }), OPTIONS)).toBe('off_schedule');
    expect(exclusionReason(driver('a', { busy: [{ start: 1500, end: 2500 }], availability: 'offline' }), OPTIONS)).toBe('has_conflict');
    expect(exclusionReason(driver('a', { maxLoad: 2, load: 2, availability: 'offline' }), OPTIONS)).toBe('capacity');
    expect(exclusionReason(driver('a', { availability: 'on_break' }), OPTIONS)).toBe('not_available');
    expect(exclusionReason(driver('a', { zoneIds: ['zone_x'] }), { ...OPTIONS, pickupZoneIds: new Set(['zone_y']) })).toBe('outside_zone');
    expect(exclusionReason(driver('a', { defaultVehicleId: null }), { ...OPTIONS, requireVehicle: true })).toBe('no_vehicle');
    expect(exclusionReason(driver('a', { schedule: { weekly: [{ day_of_week: 1, start_time: '09:00', end_time: '17:00' }], exceptions: [] } }), OPTIONS)).toBeNull();
  });

  it('a decision lists the first 10 drivers left out, in driver id order, and counts them all by reason', async () => {
    const drivers = [
      ...Array.from({ length: 40 }, (_, i) => driver(`usr_off_${String(i).padStart(2, '0')}`, { availability: 'offline' })),
      ...Array.from({ length: 3 }, (_, i) => driver(`usr_out_${i}`, { active: false })),
      driver('usr_on_a', { position: { lat: 48.86, lng: 2.35 } }),
      driver('usr_on_b', { position: { lat: 48.9, lng: 2.35 } }),
    ];
    const job = { ...JOB, window: null, pickup: { lat: 48.86, lng: 2.35 } };
    // Everything is given in memory (the drivers, no window, not zone-based): the database is not asked.
    const { decision, winner } = await decide({} as EntityManager, 'site_1', {
      job, strategy: 'eta', now: new Date('2030-01-07T10:00:00Z'), mapping: createMappingProvider(null), requireVehicle: true,
      indexed: { drivers, timezone: 'UTC', routeWorkflowId: null, jobRows: [] },
    });
    expect(winner?.userId).toBe('usr_on_a');
    expect({ considered: decision.considered, eligible: decision.eligible }).toEqual({ considered: 45, eligible: 2 });
    expect(decision.exclusions).toEqual(drivers.slice(0, 10).map((d) => ({ driver_id: d.userId, driver_name: d.name, reason: 'not_available' })));
    expect(decision.excluded_by_reason).toEqual({ not_available: 40, inactive: 3 });
    expect(decision.candidates.map((c) => c.driver_id)).toEqual(['usr_on_a', 'usr_on_b']);
  });

  it('a decision shows the 10 best candidates, ranked, and counts every eligible driver', async () => {
    const drivers = Array.from({ length: 30 }, (_, i) => driver(`usr_${String(i).padStart(2, '0')}`, { position: { lat: 48.85 + i * 0.001, lng: 2.35 } }));
    const { decision } = await decide({} as EntityManager, 'site_1', {
      job: { ...JOB, window: null, pickup: { lat: 48.85, lng: 2.35 } }, strategy: 'eta', now: new Date('2030-01-07T10:00:00Z'), mapping: createMappingProvider(null), requireVehicle: true,
      indexed: { drivers, timezone: 'UTC', routeWorkflowId: null, jobRows: [] },
    });
    expect({ considered: decision.considered, eligible: decision.eligible, excluded: decision.excluded_by_reason }).toEqual({ considered: 30, eligible: 30, excluded: {} });
    expect(decision.candidates.map((c) => [c.driver_id, c.rank])).toEqual(drivers.slice(0, 10).map((d, i) => [d.userId, i + 1]));
  });

  it('windows conflict when they share more than an instant', () => {
    expect(overlaps({ start: 0, end: 10 }, { start: 5, end: 15 })).toBe(true);
    expect(overlaps({ start: 0, end: 10 }, { start: 10, end: 20 })).toBe(false);
    expect(overlaps({ start: 5, end: 5 }, { start: 0, end: 10 })).toBe(true);
  });
});
