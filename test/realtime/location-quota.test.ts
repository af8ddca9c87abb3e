import { describe, expect, it } from 'vitest';
import { createLocationQuota } from '../../realtime/location-quota.ts';

/** The per-driver quota of location events: a fixed window per whole second, counted per driver. */
describe('location quota', () => {
  it('admits the quota in each second, refuses the rest until the next second, and counts drivers apart', () => {
    let now = 1_700_000_000_250;
    const quota = createLocationQuota(3, () => now);
    expect([quota.take('a'), quota.take('a'), quota.take('a')]).toEqual([null, null, null]);
    expect(quota.take('a')).toBe(750);
    now += 500;
    expect(quota.take('a')).toBe(250);
    expect(quota.take('b')).toBeNull();
    now += 250;
    expect([quota.take('a'), quota.take('a'), quota.take('a'), quota.take('a')]).toEqual([null, null, null, 1000]);
  });

  it('starts a driver who was away for minutes (swept) with the whole quota', () => {
    let now = 1_700_000_000_000;
    const quota = createLocationQuota(2, () => now);
    expect([quota.take('a'), quota.take('a'), quota.take('a')]).toEqual([null, null, 1000]);
    now += 61_000;
    expect(quota.take('b')).toBeNull();
    expect([quota.take('a'), quota.take('a'), quota.take('a')]).toEqual([null, null, 1000]);
  });
});
