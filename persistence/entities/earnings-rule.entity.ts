import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** The spec's component types: how one part of a driver's pay for a job is worked out (engine/earnings). */
export const EARNINGS_COMPONENT_TYPES = ['base', 'per_distance_unit', 'per_minute', 'per_stop', 'percentage_of_job', 'wait_time', 'service_fee'] as const;
export type EarningsComponentType = (typeof EARNINGS_COMPONENT_TYPES)[number];
export type EarningsComponent = { type: EarningsComponentType; rate: number };

/** A site's pay rule: components summed, then clamped to the minimum and maximum (in the site's currency units). */
export const EarningsRuleSchema = defineEntity({
  name: 'EarningsRule',
  tableName: 'earnings_rule',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    name: p.string(),
    components: p.json<EarningsComponent[]>(),
    // numeric(12,2) comes back from pg as a string: the service converts at its edge.
    minimumAmount: p.decimal('string').nullable(),
    maximumAmount: p.decimal('string').nullable(),
    /** At most one per site (a partial unique index); the rule used when a job completes. */
    isDefault: p.boolean().default(false),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type EarningsRule = InferEntity<typeof EarningsRuleSchema>;
