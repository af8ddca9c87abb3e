import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** One line of an earning: which component, at what rate, on what input, for how much (cents). */
export type EarningsBreakdownItem = {
  component_type: string;
  rate: number;
  input_value: number;
  input_label: 'miles' | 'km' | 'minutes' | 'stops' | 'job_price' | null;
  amount: number;
};

/** What a driver earned for one completed job (written once per job by the completion consumer), plus tips. */
export const DriverEarningSchema = defineEntity({
  name: 'DriverEarning',
  tableName: 'driver_earning',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    driverUserId: p.string(),
    jobId: p.string(),
    earningsRuleId: p.string(),
    amountCents: p.integer(),
    tipAmountCents: p.integer().default(0),
    totalAmountCents: p.integer(),
    currency: p.string(),
    componentBreakdown: p.json<EarningsBreakdownItem[]>(),
    earnedAt: p.datetime(),
    jobActualPriceCents: p.integer(),
    jobDistanceMeters: p.double(),
    jobDurationSeconds: p.integer(),
    jobStopCount: p.integer(),
    ...timestamps(),
  },
});

export type DriverEarning = InferEntity<typeof DriverEarningSchema>;
