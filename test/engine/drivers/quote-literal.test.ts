import * as fc from 'fast-check';
import { escapeLiteral } from 'pg';
import { describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../../engine/drivers/tenant-round-trip.ts';

describe('quoteLiteral', () => {
  it('quotes exactly as the connection does, quotes and backslashes included', () => {
    const text = fc.string({ unit: fc.constantFrom('a', '1', ',', '{', '"', "'", '\\', ' ', 'é', '\n') });
    fc.assert(
      fc.property(fc.oneof(text, fc.string()), (value) => {
        expect(quoteLiteral(value, escapeLiteral)).toBe(escapeLiteral(value));
      }),
      { numRuns: 2000 },
    );
  });
});
