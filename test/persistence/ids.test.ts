import { decodeTime, isValid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { monotonicUlidFactory } from '../../persistence/monotonic-ulid.ts';
import { newId } from '../../persistence/ids.ts';

// The `ulid` package is the independent reference for the format: its decoder reads what ours writes.
describe('ids', () => {
  it('are prefixed ULIDs carrying the time they were made', () => {
    const before = Date.now();
    const id = newId('job');
    const after = Date.now();
    expect(id).toMatch(/^job_[0-9A-HJKMNP-TV-Z]{26}$/);
    const ulid = id.slice('job_'.length);
    expect(isValid(ulid)).toBe(true);
    expect(decodeTime(ulid)).toBeGreaterThanOrEqual(before);
    expect(decodeTime(ulid)).toBeLessThanOrEqual(after);
  });

  it('sort in creation order and never repeat, within one millisecond and across many', () => {
    const ids = Array.from({ length: 50_000 }, () => newId('audit'));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.toSorted()).toEqual(ids);
  });

  it('keep sorting in creation order when the clock steps back', () => {
    const times = [1_000_000, 1_000_005, 999_000, 999_001, 1_000_006];
    const next = monotonicUlidFactory(() => times.shift()!);
    const ids = [next(), next(), next(), next(), next()];
    expect(ids.toSorted()).toEqual(ids);
    expect(ids.map((id) => decodeTime(id))).toEqual([1_000_000, 1_000_005, 1_000_005, 1_000_005, 1_000_006]);
  });

  it('draw fresh random bits each new millisecond', () => {
    let time = 1_700_000_000_000;
    const next = monotonicUlidFactory(() => (time += 1));
    const randomParts = new Set(Array.from({ length: 2_000 }, () => next().slice(10)));
    expect(randomParts.size).toBe(2_000);
  });
});
