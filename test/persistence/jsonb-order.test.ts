import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asJsonb } from '../../persistence/jsonb-order.ts';

/** The way it was done before: through JSON text, then every object's keys sorted the way `jsonb` keeps them. */
function throughText(value: unknown): unknown {
  const reorder = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(reorder);
    if (v === null || typeof v !== 'object') return v;
    const keys = Object.keys(v).sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)));
    return Object.fromEntries(keys.map((key) => [key, reorder((v as Record<string, unknown>)[key])]));
  };
  return reorder(JSON.parse(JSON.stringify(value)));
}

/** Same values, same key order (JSON text keeps the order), and no `-0` where the text would give `0`. */
function sameAsThroughText(value: unknown): boolean {
  const copy = asJsonb(value);
  const expected = throughText(value);
  expect(JSON.stringify(copy)).toBe(JSON.stringify(expected));
  expect(copy).toStrictEqual(expected);
  return true;
}

const candidate = (i: number) => ({ driver_id: `usr_${i}`, driver_name: `Driver ${i}`, eta_minutes: i / 10, distance_meters: i * 100, load: i % 3, rank: i + 1 });

describe('asJsonb: a value as a jsonb column reads it back', () => {
  it('equals the JSON round trip with jsonb key order, for any JSON value and the JS values JSON text changes', () => {
    const odd = fc.oneof(fc.constant(undefined), fc.constant(-0), fc.constant(Number.NaN), fc.constant(Number.POSITIVE_INFINITY), fc.date({ noInvalidDate: true }), fc.constant(() => 1));
    const key = fc.oneof(fc.string(), fc.constantFrom('é', 'zz', 'a', 'ab', '\u{1F600}', '\uE000', '__proto__', 'eta_minutes', 'rank'));
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), odd, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(key, tie('node'), { maxKeys: 5 })),
    })).node;
    // Wrapped: a column's value is never undefined itself (the record writes null), only its members may be.
    fc.assert(fc.property(value, (v) => {
      expect(sameAsThroughText({ v })).toBe(true);
    }), { numRuns: 2000 });
    fc.assert(fc.property(value, (v) => {
      expect(sameAsThroughText([v])).toBe(true);
    }), { numRuns: 500 });
  });

  it('a decision as dispatch records it: the same shapes many times over give the same copies', () => {
    const decision = {
      strategy: 'eta', tie_rule: 'eta asc', decided_at: new Date(0).toISOString(), considered: 30, eligible: 25,
      candidates: Array.from({ length: 25 }, (_, i) => candidate(i)), exclusions: [{ driver_id: 'usr_x', driver_name: 'X', reason: 'off_schedule' }], winner: { driver_id: 'usr_0', driver_name: 'Driver 0' },
    };
    for (let i = 0; i < 3; i++) expect(sameAsThroughText(decision)).toBe(true);
    expect(asJsonb(decision)).not.toBe(decision);
    expect(Object.keys(asJsonb(decision) as object)).toEqual(['winner', 'eligible', 'strategy', 'tie_rule', 'candidates', 'considered', 'decided_at', 'exclusions']);
    expect(sameAsThroughText(null)).toBe(true);
  });
});
