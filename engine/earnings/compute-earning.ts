import type { EarningsBreakdownItem } from '../../persistence/entities/driver-earning.entity.ts';
import type { EarningsComponent } from '../../persistence/entities/earnings-rule.entity.ts';
import { minorUnitDigits } from './currency-minor-unit.ts';

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

/** What of the site the pay depends on: the unit distance is paid in, and the currency amounts are counted in. */
export type PaySite = { unitSystem: 'metric' | 'imperial'; currency: string };

/** `amountCents` is in the currency's minor unit (cents for EUR, yen for JPY, fils for KWD). */
export type ComputedEarning = { amountCents: number; breakdown: EarningsBreakdownItem[] };

const METERS_PER = { km: 1000, miles: 1609.344 } as const;

/**
 * A job's pay under a rule, in integer minor units of the site's currency ("cents": 1/100 EUR, 1 JPY, 1/1000 KWD),
 * with one breakdown line per component. Rates are in the site's currency units: `base` and `service_fee` are flat
 * (the fee is deducted), `per_distance_unit` is per km or mile (the site's unit system), `per_minute` per minute of
 * the job, `wait_time` per minute at the stops, `per_stop` per stop, and `percentage_of_job` a percentage of the
 * job's price.
 *
 * Each line's input is rounded to two decimals first and its amount is `round(rate × input)` in minor units, so
 * anyone can recompute a line from what it shows. The amount is never below 0 (a rule without a minimum has one of
 * 0). When the minimum or maximum applies, an adjustment line (`minimum_adjustment` / `maximum_adjustment`) carries
 * the difference: the lines always sum exactly to the amount.
 */
export function computeEarning(rule: EarningRule, inputs: EarningInputs, site: PaySite): ComputedEarning {
  const distanceUnit = site.unitSystem === 'imperial' ? 'miles' : 'km';
  // Not always 100: a yen has no minor unit and a dinar has 1000 fils.
  const minorPerUnit = 10 ** minorUnitDigits(site.currency);
  const toMinor = (units: number): number => roundHalfAway(units * minorPerUnit);
  const breakdown = rule.components.map((component): EarningsBreakdownItem => {
    const { type, rate } = component;
    switch (type) {
      case 'base':
        return line(type, rate, 1, null, toMinor(rate));
      case 'service_fee':
        return line(type, rate, 1, null, -toMinor(rate));
      case 'per_distance_unit': {
        const distance = twoDecimals(inputs.distanceMeters / METERS_PER[distanceUnit]);
        return line(type, rate, distance, distanceUnit, toMinor(rate * distance));
      }
      case 'per_minute': {
        const minutes = twoDecimals(inputs.durationSeconds / 60);
        return line(type, rate, minutes, 'minutes', toMinor(rate * minutes));
      }
      case 'wait_time': {
        const minutes = twoDecimals(inputs.waitSeconds / 60);
        return line(type, rate, minutes, 'minutes', toMinor(rate * minutes));
      }
      case 'per_stop':
        return line(type, rate, inputs.stopCount, 'stops', toMinor(rate * inputs.stopCount));
      case 'percentage_of_job':
        return line(type, rate, inputs.priceCents / minorPerUnit, 'job_price', roundHalfAway((inputs.priceCents * rate) / 100));
    }
  });
  const subtotal = breakdown.reduce((sum, item) => sum + item.amount, 0);
  // A rule without a minimum has one of 0: a service fee larger than the rest must not make the driver owe for a job
  // they did (bounds are never negative, so this is the rule's own minimum otherwise).
  const floor = Math.max(rule.minimumAmount ?? 0, 0);
  const ceiling = rule.maximumAmount;
  let amountCents = Math.max(subtotal, toMinor(floor));
  if (ceiling !== null) amountCents = Math.min(amountCents, toMinor(ceiling));
  if (amountCents > subtotal) breakdown.push(line('minimum_adjustment', floor, subtotal / minorPerUnit, null, amountCents - subtotal));
  if (ceiling !== null && amountCents < subtotal) breakdown.push(line('maximum_adjustment', ceiling, subtotal / minorPerUnit, null, amountCents - subtotal));
  return { amountCents, breakdown };
}

function line(componentType: string, rate: number, inputValue: number, inputLabel: EarningsBreakdownItem['input_label'], amount: number): EarningsBreakdownItem {
  return { component_type: componentType, rate, input_value: inputValue, input_label: inputLabel, amount };
}

/** Rounds half away from zero after removing binary noise (1.005 × 100 is 100.49999...). */
function roundHalfAway(value: number): number {
  const cleaned = Number(value.toPrecision(12));
  return Math.sign(cleaned) * Math.round(Math.abs(cleaned));
}

function twoDecimals(value: number): number {
  return roundHalfAway(value * 100) / 100;
}
