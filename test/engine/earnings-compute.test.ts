import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeEarning, type EarningInputs, type PaySite } from '../../engine/earnings/compute-earning.ts';
import { EARNINGS_COMPONENT_TYPES } from '../../persistence/entities/earnings-rule.entity.ts';

/** 12.5 km, 42 minutes, 3 stops, a 40.00 job, 6 minutes at the stops. */
const JOB: EarningInputs = { distanceMeters: 12_500, durationSeconds: 42 * 60, stopCount: 3, priceCents: 4000, waitSeconds: 360 };
const METRIC_EUR: PaySite = { unitSystem: 'metric', currency: 'EUR' };
/** Currencies with 2, 0 and 3 minor-unit digits, and how many minor units make one. */
const CURRENCIES = [['EUR', 100], ['JPY', 1], ['KWD', 1000]] as const;

describe('computeEarning', () => {
  it('works out each component from its input, in cents, with a line a reader can recompute', () => {
    const rule = {
      components: [
        { type: 'base' as const, rate: 3 },
        { type: 'per_distance_unit' as const, rate: 0.8 },
        { type: 'per_minute' as const, rate: 0.1 },
        { type: 'per_stop' as const, rate: 0.5 },
        { type: 'percentage_of_job' as const, rate: 10 },
        { type: 'wait_time' as const, rate: 0.25 },
        { type: 'service_fee' as const, rate: 1.2 },
      ],
      minimumAmount: null,
      maximumAmount: null,
    };
    const { amountCents, breakdown } = computeEarning(rule, JOB, METRIC_EUR);
    expect(breakdown).toEqual([
      { component_type: 'base', rate: 3, input_value: 1, input_label: null, amount: 300 },
      { component_type: 'per_distance_unit', rate: 0.8, input_value: 12.5, input_label: 'km', amount: 1000 },
      { component_type: 'per_minute', rate: 0.1, input_value: 42, input_label: 'minutes', amount: 420 },
      { component_type: 'per_stop', rate: 0.5, input_value: 3, input_label: 'stops', amount: 150 },
      { component_type: 'percentage_of_job', rate: 10, input_value: 40, input_label: 'job_price', amount: 400 },
      { component_type: 'wait_time', rate: 0.25, input_value: 6, input_label: 'minutes', amount: 150 },
      { component_type: 'service_fee', rate: 1.2, input_value: 1, input_label: null, amount: -120 },
    ]);
    expect(amountCents).toBe(300 + 1000 + 420 + 150 + 400 + 150 - 120);
  });

  it("pays distance per mile on an imperial site", () => {
    const { breakdown } = computeEarning({ components: [{ type: 'per_distance_unit', rate: 2 }], minimumAmount: null, maximumAmount: null }, JOB, { unitSystem: 'imperial', currency: 'EUR' });
    // 12.5 km = 7.767 mi, shown as 7.77: 2 × 7.77 = 15.54
    expect(breakdown).toEqual([{ component_type: 'per_distance_unit', rate: 2, input_value: 7.77, input_label: 'miles', amount: 1554 }]);
  });

  it('clamps to the minimum and to the maximum, with an adjustment line so the lines still sum to the amount', () => {
    const low = computeEarning({ components: [{ type: 'base', rate: 2 }], minimumAmount: 5.5, maximumAmount: 20 }, JOB, METRIC_EUR);
    expect(low.amountCents).toBe(550);
    expect(low.breakdown.at(-1)).toEqual({ component_type: 'minimum_adjustment', rate: 5.5, input_value: 2, input_label: null, amount: 350 });

    const high = computeEarning({ components: [{ type: 'per_distance_unit', rate: 3 }], minimumAmount: 5.5, maximumAmount: 20 }, JOB, METRIC_EUR);
    expect(high.amountCents).toBe(2000);
    expect(high.breakdown.at(-1)).toEqual({ component_type: 'maximum_adjustment', rate: 20, input_value: 37.5, input_label: null, amount: -1750 });

    const inside = computeEarning({ components: [{ type: 'base', rate: 7 }], minimumAmount: 5.5, maximumAmount: 20 }, JOB, METRIC_EUR);
    expect(inside).toEqual({ amountCents: 700, breakdown: [{ component_type: 'base', rate: 7, input_value: 1, input_label: null, amount: 700 }] });
  });

  it('always sums its lines exactly to the amount, which stays within the bounds and never below 0 (any rule, any job, any currency)', () => {
    const rate = fc.double({ min: 0, max: 500, noNaN: true });
    const rule = fc.record({
      components: fc.uniqueArray(fc.record({ type: fc.constantFrom(...EARNINGS_COMPONENT_TYPES), rate }), { selector: (c) => c.type, minLength: 1 }),
      bounds: fc.tuple(fc.option(fc.double({ min: 0, max: 1000, noNaN: true })), fc.option(fc.double({ min: 0, max: 1000, noNaN: true }))),
    });
    const job = fc.record({
      distanceMeters: fc.double({ min: 0, max: 500_000, noNaN: true }),
      durationSeconds: fc.integer({ min: 0, max: 86_400 }),
      stopCount: fc.integer({ min: 0, max: 50 }),
      priceCents: fc.integer({ min: 0, max: 1_000_000 }),
      waitSeconds: fc.integer({ min: 0, max: 20_000 }),
    });
    fc.assert(
      fc.property(rule, job, fc.constantFrom('metric' as const, 'imperial' as const), fc.constantFrom(...CURRENCIES), ({ components, bounds }, inputs, unitSystem, [currency, minorPerUnit]) => {
        const [a, b] = bounds.map((x) => (x === null ? null : Math.round(x * 100) / 100)) as [number | null, number | null];
        const [minimumAmount, maximumAmount] = a !== null && b !== null && a > b ? [b, a] : [a, b];
        const { amountCents, breakdown } = computeEarning({ components, minimumAmount, maximumAmount }, inputs, { unitSystem, currency });
        expect(Number.isInteger(amountCents)).toBe(true);
        expect(breakdown.reduce((sum, line) => sum + line.amount, 0)).toBe(amountCents);
        expect(amountCents).toBeGreaterThanOrEqual(minimumAmount === null ? 0 : Math.round(minimumAmount * minorPerUnit));
        expect(amountCents).toBeLessThanOrEqual(maximumAmount === null ? Infinity : Math.round(maximumAmount * minorPerUnit));
      }),
      { numRuns: 500 },
    );
  });
});
