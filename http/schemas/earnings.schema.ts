import { Type } from 'typebox';
import { fromDecimal } from '../../engine/earnings/earnings-rule.service.ts';
import type { DriverEarning } from '../../persistence/entities/driver-earning.entity.ts';
import { EARNINGS_COMPONENT_TYPES, type EarningsRule } from '../../persistence/entities/earnings-rule.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';

const Money = Type.Number({ minimum: 0, maximum: 1_000_000, description: "in the site's currency units (12.5 = 12.50)" });
const ComponentType = Type.Union(EARNINGS_COMPONENT_TYPES.map((t) => Type.Literal(t)), { description: EARNINGS_COMPONENT_TYPES.join(', ') });
const Component = Type.Object(
  {
    type: ComponentType,
    rate: Type.Number({ minimum: 0, maximum: 100_000, description: 'currency units per unit of input; a percentage for percentage_of_job' }),
  },
  { additionalProperties: false },
);
const Components = Type.Array(Component, { minItems: 1, maxItems: EARNINGS_COMPONENT_TYPES.length });
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const EarningsRuleResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    name: Type.String(),
    components: Type.Array(Type.Object({ type: Type.String(), rate: Type.Number() }, { additionalProperties: false })),
    minimum_amount: Nullable(Type.Number()),
    maximum_amount: Nullable(Type.Number()),
    is_default: Type.Boolean(),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateEarningsRuleBody = Type.Object(
  { name: Name, components: Components, minimum_amount: Type.Optional(Money), maximum_amount: Type.Optional(Money), is_default: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const UpdateEarningsRuleBody = Type.Object(
  {
    id: Id,
    name: Type.Optional(Name),
    components: Type.Optional(Components),
    minimum_amount: Clearable(Money),
    maximum_amount: Clearable(Money),
    is_default: Type.Optional(Type.Boolean()),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const BreakdownItem = Type.Object(
  {
    component_type: Type.String({ description: 'a component type, or minimum_adjustment / maximum_adjustment when a bound applied' }),
    rate: Type.Number(),
    input_value: Type.Number(),
    input_label: Nullable(Type.Union([Type.Literal('miles'), Type.Literal('km'), Type.Literal('minutes'), Type.Literal('stops'), Type.Literal('job_price')])),
    amount: Type.Integer({ description: "cents: the currency's minor unit (1/100 EUR, 1 JPY, 1/1000 KWD)" }),
  },
  { additionalProperties: false },
);

export const DriverEarningResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    driver_user_id: Id,
    job_id: Id,
    earnings_rule_id: Id,
    amount_cents: Type.Integer(),
    tip_amount_cents: Type.Integer(),
    total_amount_cents: Type.Integer(),
    currency: Type.String(),
    component_breakdown: Type.Array(BreakdownItem),
    earned_at: Timestamp,
    job_actual_price_cents: Type.Integer(),
    job_distance_meters: Type.Number(),
    job_duration_seconds: Type.Integer(),
    job_stop_count: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

const TotalsFields = {
  job_count: Type.Integer(),
  total_amount_cents: Type.Integer({ description: 'earned amounts, tips excluded' }),
  total_cents: Type.Integer({ description: 'amounts plus tips' }),
  total_tip_cents: Type.Integer(),
};
export const EarningsSummaryEntry = Type.Object({ driver_user_id: Id, ...TotalsFields }, { additionalProperties: false });
export const EarningsPeriodEntry = Type.Object({ period: Type.String({ description: '2026-11-21, 2026-W47 or 2026-11' }), ...TotalsFields }, { additionalProperties: false });

export const TipBody = Type.Object(
  { job_id: Id, amount_cents: Type.Integer({ minimum: 1, maximum: 100_000_00, description: 'added to the earning of a completed job' }) },
  { additionalProperties: false },
);

export function toEarningsRuleResponse(rule: EarningsRule) {
  return {
    id: rule.id,
    site_id: rule.siteId,
    name: rule.name,
    components: rule.components,
    minimum_amount: fromDecimal(rule.minimumAmount),
    maximum_amount: fromDecimal(rule.maximumAmount),
    is_default: rule.isDefault,
    is_active: rule.isActive,
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}

export function toDriverEarningResponse(e: DriverEarning) {
  return {
    id: e.id,
    site_id: e.siteId,
    driver_user_id: e.driverUserId,
    job_id: e.jobId,
    earnings_rule_id: e.earningsRuleId,
    amount_cents: e.amountCents,
    tip_amount_cents: e.tipAmountCents,
    total_amount_cents: e.totalAmountCents,
    currency: e.currency,
    component_breakdown: e.componentBreakdown,
    earned_at: e.earnedAt.toISOString(),
    job_actual_price_cents: e.jobActualPriceCents,
    job_distance_meters: Number(e.jobDistanceMeters),
    job_duration_seconds: e.jobDurationSeconds,
    job_stop_count: e.jobStopCount,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}
