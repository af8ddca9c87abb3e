import type { EarningsBreakdownItem } from '../../persistence/entities/driver-earning.entity.ts';
import type { EarningsComponent } from '../../persistence/entities/earnings-rule.entity.ts';

/** What a completed job brings to the rule: measured on the job, converted here to the site's units. */
export type EarningInputs = {
  distanceMeters: number;
  durationSeconds: number;
  stopCount: number;
  priceCents: number;
  /** Time spent at the job's stops between arriving and completing them. */
  waitSeconds: number;
};

export type EarningRule = {
  components: EarningsComponent[];
  /** Bounds in the site's currency units (e.g. 5.5 = 5.50), or null. */
  minimumAmount: number | null;
  maximumAmount: number | null;
};

export type ComputedEarning = { amountCents: number; breakdown: EarningsBreakdownItem[] };

const METERS_PER = { km: 1000, miles: 1609.344 } as const;

/**
 * A job's pay under a rule, in integer cents, with one breakdown line per component. Rates are in the site's
 * currency units: `base` and `service_fee` are flat (the fee is deducted), `per_distance_unit` is per km or mile
 * (the site's unit system), `per_minute` per minute of the job, `wait_time` per minute at the stops, `per_stop` per
 * stop, and `percentage_of_job` a percentage of the job's price.
 *
 * Each line's input is rounded to two decimals first and its amount is `round(rate × input)` in cents, so anyone
 * can recompute a line from what it shows. When the minimum or maximum applies, an adjustment line
 * (`minimum_adjustment` / `maximum_adjustment`) carries the difference: the lines always sum exactly to the amount.
 */
export function computeEarning(rule: EarningRule, inputs: EarningInputs, unitSystem: 'metric' | 'imperial'): ComputedEarning {
  const distanceUnit = unitSystem === 'imperial' ? 'miles' : 'km';
  const breakdown = rule.components.map((component): EarningsBreakdownItem => {
    const { type, rate } = component;
    switch (type) {
      case 'base':
        return line(type, rate, 1, null, cents(rate));
      case 'service_fee':
        return line(type, rate, 1, null, -cents(rate));
      case 'per_distance_unit': {
        const distance = twoDecimals(inputs.distanceMeters / METERS_PER[distanceUnit]);
        return line(type, rate, distance, distanceUnit, cents(rate * distance));
      }
      case 'per_minute': {
        const minutes = twoDecimals(inputs.durationSeconds / 60);
        return line(type, rate, minutes, 'minutes', cents(rate * minutes));
      }
      case 'wait_time': {
        const minutes = twoDecimals(inputs.waitSeconds / 60);
        return line(type, rate, minutes, 'minutes', cents(rate * minutes));
      }
      case 'per_stop':
        return line(type, rate, inputs.stopCount, 'stops', cents(rate * inputs.stopCount));
      case 'percentage_of_job':
        return line(type, rate, inputs.priceCents / 100, 'job_price', roundHalfAway((inputs.priceCents * rate) / 100));
    }
  });
  const subtotal = breakdown.reduce((sum, item) => sum + item.amount, 0);
  const minimum = rule.minimumAmount === null ? null : cents(rule.minimumAmount);
  const maximum = rule.maximumAmount === null ? null : cents(rule.maximumAmount);
  let amountCents = subtotal;
  if (minimum !== null && amountCents < minimum) amountCents = minimum;
  if (maximum !== null && amountCents > maximum) amountCents = maximum;
  if (amountCents !== subtotal) {
    const bound = amountCents === minimum ? rule.minimumAmount! : rule.maximumAmount!;
    const type = amountCents === minimum ? 'minimum_adjustment' : 'maximum_adjustment';
    breakdown.push(line(type, bound, subtotal / 100, null, amountCents - subtotal));
  }
  return { amountCents, breakdown };
}

function line(componentType: string, rate: number, inputValue: number, inputLabel: EarningsBreakdownItem['input_label'], amount: number): EarningsBreakdownItem {
  return { component_type: componentType, rate, input_value: inputValue, input_label: inputLabel, amount };
}

/** Currency units to cents. */
function cents(units: number): number {
  return roundHalfAway(units * 100);
}

/** Rounds half away from zero after removing binary noise (1.005 × 100 is 100.49999...). */
function roundHalfAway(value: number): number {
  const cleaned = Number(value.toPrecision(12));
  return Math.sign(cleaned) * Math.round(Math.abs(cleaned));
}

function twoDecimals(value: number): number {
  return roundHalfAway(value * 100) / 100;
}
