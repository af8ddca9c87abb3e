import { describe, expect, it } from 'vitest';
import { waitBucketS } from '../../sim/metrics.ts';

describe("the wait chart's buckets", () => {
  it("span the scenario's pickup window in twelve whole-minute buckets, so long windows are not cut at the first hour", () => {
    expect(waitBucketS(4 * 3600) * 12).toBe(4 * 3600);
    expect(waitBucketS(1200)).toBe(120);
    expect(waitBucketS(100)).toBe(60);
  });
});
