import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diff } from '../../persistence/audit.ts';

/** The rule as written before values were compared directly: a field changed when its JSON texts differ. */
function diffByText(before: Record<string, unknown> | null, after: Record<string, unknown> | null): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const key of new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])) {
    if (key === 'updated_at') continue;
    const from = before?.[key] ?? null;
    const to = after?.[key] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[key] = { from, to };
  }
  return changes;
}

describe('audit diff', () => {
  it('names the same changed fields as comparing JSON texts, whatever the values (dates, NaN, objects with toJSON, null and undefined)', () => {
    const instant = fc.integer({ min: 0, max: 3 }).map((n) => new Date(n * 1000));
    const field = fc.oneof(
      fc.constantFrom(null, undefined, 0, -0, 1, Number.NaN, Number.POSITIVE_INFINITY, '', 'null', 'a', true, false, [], {}, [null], { a: 1 }, new Date(Number.NaN)),
      instant,
      instant.map((d) => d.toISOString()),
      fc.constant({ toJSON: () => null }),
      fc.jsonValue({ maxDepth: 2 }),
    );
    const row = fc.option(fc.dictionary(fc.constantFrom('id', 'phase', 'updated_at', 'decision', 'driver_user_id'), field), { nil: null });
    fc.assert(fc.property(row, row, (before, after) => {
      expect(Object.keys(diff(before, after))).toEqual(Object.keys(diffByText(before, after)));
    }), { numRuns: 3000 });
  });

  it('the same instant in two Date objects is no change; another instant is', () => {
    expect(diff({ at: new Date(5) }, { at: new Date(5) })).toEqual({});
    expect(Object.keys(diff({ at: new Date(5) }, { at: new Date(6) }))).toEqual(['at']);
    expect(Object.keys(diff(null, { decision: { winner: null }, note: null }))).toEqual(['decision']);
  });
});
