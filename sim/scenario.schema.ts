import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';

/**
 * A scenario is data (issue 7): where, who drives, what is asked for, and how the simulated office dispatches. The
 * site's own workflow and dispatch settings are a fresh site's defaults, and the time windows are not sent to the
 * engine (README, Simulator: "What a scenario cannot describe yet").
 */

const LatLng = Type.Object({ lat: Type.Number({ minimum: -90, maximum: 90 }), lng: Type.Number({ minimum: -180, maximum: 180 }) }, { additionalProperties: false });

/** [min, max] seconds (or any quantity), drawn uniformly. */
const Range = Type.Tuple([Type.Number({ minimum: 0 }), Type.Number({ minimum: 0 })]);

const Area = Type.Union([
  Type.Object({ bbox: Type.Tuple([Type.Number(), Type.Number(), Type.Number(), Type.Number()], { description: '[min_lng, min_lat, max_lng, max_lat]' }) }, { additionalProperties: false }),
  Type.Object({ polygon: Type.Array(Type.Tuple([Type.Number(), Type.Number()]), { minItems: 3, description: 'ring of [lng, lat]' }) }, { additionalProperties: false }),
]);

const Hotspot = Type.Object({ lat: Type.Number(), lng: Type.Number(), radius_m: Type.Number({ exclusiveMinimum: 0 }), weight: Type.Number({ exclusiveMinimum: 0 }) }, { additionalProperties: false });

/** Where a stop lies: anywhere in the area, around weighted hotspots, or within a radius of the pickup. */
const Placement = Type.Union([
  Type.Object({ kind: Type.Literal('uniform') }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('hotspots'), hotspots: Type.Array(Hotspot, { minItems: 1 }) }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('near_pickup'), radius_m: Type.Number({ exclusiveMinimum: 0 }) }, { additionalProperties: false }),
]);

const Shift = Type.Object(
  { start_s: Type.Number({ minimum: 0, description: 'seconds after the day starts' }), end_s: Type.Number({ minimum: 0 }), share: Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'fraction of the fleet on this shift' }) },
  { additionalProperties: false },
);

/** Speed over the day: km/h from `from_s` on (the first entry should start at 0). */
const SpeedStep = Type.Object({ from_s: Type.Number({ minimum: 0 }), kmh: Type.Number({ exclusiveMinimum: 0, maximum: 200 }) }, { additionalProperties: false });

const Acceptance = Type.Object(
  {
    offer_accept_rate: Type.Number({ minimum: 0, maximum: 1, description: 'chance a driver accepts an offer (require_confirmation)' }),
    offer_response_s: Range,
    pool_claim_delay_s: Range,
    pool_radius_m: Type.Number({ exclusiveMinimum: 0, description: 'the three nearest free drivers within this distance of a new pool post try to claim it after pool_claim_delay_s (the live feed tells them); a free driver who looks at the pool later takes the nearest job within max_pickup_m' }),
    max_pickup_m: Type.Number({ exclusiveMinimum: 0, description: 'a driver returns an offer whose pickup is farther than this' }),
  },
  { additionalProperties: false },
);

export const ScenarioSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9-]+$' }),
    description: Type.String(),
    day: Type.Object({ start: Type.String({ format: 'date-time' }), duration_s: Type.Number({ exclusiveMinimum: 0, maximum: 7 * 86_400 }) }, { additionalProperties: false }),
    area: Area,
    fleet: Type.Object(
      {
        drivers: Type.Integer({ minimum: 1, maximum: 10_000 }),
        shifts: Type.Array(Shift, { minItems: 1 }),
        start: Type.Union([Type.Literal('uniform'), Type.Literal('depots')]),
        depots: Type.Optional(Type.Array(LatLng)),
        vehicle: Type.Union([Type.Literal('car'), Type.Literal('van'), Type.Literal('truck'), Type.Literal('scooter'), Type.Literal('bike')]),
        speed_profile: Type.Array(SpeedStep, { minItems: 1 }),
        detour_factor: Type.Number({ minimum: 1, maximum: 5 }),
        acceptance: Acceptance,
        pay: Type.Object({ per_job_cents: Type.Integer({ minimum: 0 }), per_km_cents: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
        return_to_depot: Type.Optional(Type.Boolean()),
        /** The workers' max_load (open jobs at once); absent: the site default. */
        max_load: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      },
      { additionalProperties: false },
    ),
    demand: Type.Object(
      {
        jobs: Type.Integer({ minimum: 0, maximum: 100_000 }),
        arrival_weights: Type.Array(Type.Number({ minimum: 0 }), { minItems: 1, description: 'relative arrival rate per equal slice of the day' }),
        pickup: Placement,
        dropoff: Placement,
        pickup_window_s: Type.Number({ exclusiveMinimum: 0, description: "a pickup's service is due to start this long after the job is created (the simulator's on-time figures; not sent to the engine)" }),
        dropoff_window_s: Type.Number({ exclusiveMinimum: 0, description: "a dropoff's service is due to start this long after the job is created (the simulator's on-time figures; not sent to the engine)" }),
        service_s: Type.Object({ pickup: Range, dropoff: Range }, { additionalProperties: false }),
        /** Jobs placed this far outside the area on purpose: the report must name them, not drop them. */
        unreachable_jobs: Type.Optional(Type.Integer({ minimum: 0 })),
      },
      { additionalProperties: false },
    ),
    site: Type.Object(
      {
        require_confirmation: Type.Boolean(),
        /** Seconds before a returned job is offered again (a job nobody could take waits for a freed driver). */
        retry_s: Type.Number({ exclusiveMinimum: 0 }),
        /** How many times drivers may give a job back before it is reported as not dispatched. */
        max_returns: Type.Integer({ minimum: 1 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Scenario = Static<typeof ScenarioSchema>;
export type Placement = Static<typeof Placement>;

const validator = Compile(ScenarioSchema);

/** Checks a parsed scenario; the error lists every failing path so a hand-edited file is quick to fix. */
export function parseScenario(value: unknown, source: string): Scenario {
  if (validator.Check(value)) return value;
  const problems = [...validator.Errors(value)].slice(0, 10).map((error) => `${error.instancePath || '/'} ${error.message}`);
  throw new Error(`scenario ${source} is invalid:\n  ${problems.join('\n  ')}`);
}
