import { Type } from 'typebox';
import { DISPATCH_METHODS, DISPATCH_STATUSES, EXCLUSION_REASONS, SELECTION_STRATEGIES, SITE_STRATEGIES } from '../../engine/dispatch/dispatch-types.ts';
import { BulkFailure, Id, Nullable, Timestamp } from './common.schema.ts';
import { JobResponse } from './job.schema.ts';
import { RouteResponse } from './route.schema.ts';
import { OperationalStatusSchema, WorkerResponse } from './worker.schema.ts';

const L = <T extends string>(value: T) => Type.Literal(value);

// Spelled out (not mapped from the lists) so the static types keep their literals; the lists stay the source of
// truth for the engine, and the OpenAPI test would show a drift.
export const DispatchMethodSchema = Type.Union(
  [L('manual'), L('opt-in'), L('round-robin'), L('priority'), L('load-balanced'), L('zone-based'), L('team'), L('auto')],
  { description: DISPATCH_METHODS.join(', ') },
);
export const SelectionStrategySchema = Type.Union([L('eta'), L('load'), L('round-robin')], { description: `${SELECTION_STRATEGIES.join(', ')}; eta by default` });
export const SiteStrategySchema = Type.Union([L('round-robin'), L('priority'), L('load-balanced'), L('zone-based')], { description: SITE_STRATEGIES.join(', ') });
const StatusSchema = Type.Union([L('pending'), L('processing'), L('completed')], { description: DISPATCH_STATUSES.join(', ') });
const StartAt = Type.String({ format: 'date-time', description: 'in the future: the dispatch is carried out then (durable delayed job)' });
const RequireConfirmation = Type.Boolean({ description: 'leave the dispatch pending until the driver accepts (POST /dispatch/accept)' });

const FailedJob = Type.Object({ job_id: Type.String(), error: Type.String(), code: Type.String() }, { additionalProperties: false });

const Candidate = Type.Object(
  {
    driver_id: Type.String(),
    driver_name: Type.String(),
    eta_minutes: Nullable(Type.Number()),
    distance_meters: Nullable(Type.Number()),
    load: Type.Integer({ description: 'open jobs (assigned or in progress)' }),
    rank: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);

export const DecisionSchema = Type.Object(
  {
    strategy: Type.String(),
    tie_rule: Type.String(),
    decided_at: Timestamp,
    considered: Type.Integer(),
    eligible: Type.Integer(),
    candidates: Type.Array(Candidate, { description: 'best first; at most 10 (earlier records: 25)' }),
    exclusions: Type.Array(Type.Object({ driver_id: Type.String(), driver_name: Type.String(), reason: Type.String({ description: EXCLUSION_REASONS.join(', ') }) }, { additionalProperties: false }), {
      description: 'the first drivers left out, in driver id order; at most 10 (earlier records: 25)',
    }),
    excluded_by_reason: Type.Optional(
      Type.Record(Type.String(), Type.Integer({ minimum: 1 }), {
        description: `every driver left out, counted by reason (keys among ${EXCLUSION_REASONS.join(', ')}; the list names only the first ones); strategy and optimizer decisions, absent on manual assignments, claims and earlier records`,
      }),
    ),
    winner: Nullable(Type.Object({ driver_id: Type.String(), driver_name: Type.String() }, { additionalProperties: false })),
    failure: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false })),
    failed_jobs: Type.Optional(Type.Array(FailedJob, { description: "a scheduled route dispatch, once run: the route's jobs that could not go to the driver (max_load reached, ...), with the reason" })),
  },
  { additionalProperties: false, description: 'why this driver: candidates with their scores, exclusions with reasons, the tie rule' },
);

export const DispatchResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    job_id: Nullable(Type.String()),
    route_id: Nullable(Type.String()),
    team_id: Nullable(Type.String()),
    assigned_to_driver_id: Nullable(Type.String()),
    assigned_to_vehicle_id: Nullable(Type.String()),
    method: DispatchMethodSchema,
    status: StatusSchema,
    require_confirmation: Type.Boolean(),
    driver_accepted: Type.Boolean(),
    driver_accepted_at: Nullable(Timestamp),
    dispatch_at: Nullable(Timestamp),
    dispatched_at: Nullable(Timestamp),
    completed_at: Nullable(Timestamp),
    posted_at: Nullable(Timestamp),
    decision: Nullable(DecisionSchema),
    created_by_user_id: Nullable(Type.String()),
    is_active: Type.Boolean(),
    version: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

/** A dispatch record as its driver sees it (the answer of POST /dispatch/accept): the decision cut to its strategy and winner. */
export const DriverDispatchResponse = Type.Object(
  {
    ...DispatchResponse.properties,
    decision: Nullable(
      Type.Object(
        { strategy: Type.String(), winner: DecisionSchema.properties.winner },
        { additionalProperties: false, description: 'the strategy and the winner only: a driver never sees how colleagues were ranked' },
      ),
    ),
  },
  { additionalProperties: false },
);

/** A route's own fields: GET /route's answer without its stops and plan. */
export const RouteSummary = Type.Omit(RouteResponse, ['job_ids', 'stops', 'planned_distance_meters', 'planned_duration_seconds']);

export const AssignBody = Type.Object(
  {
    job_id: Id,
    driver_id: Type.Optional(Id),
    vehicle_id: Type.Optional(Id),
    method: Type.Optional(DispatchMethodSchema),
    require_confirmation: Type.Optional(RequireConfirmation),
    start_at: Type.Optional(StartAt),
    route_id: Type.Optional(Id),
  },
  { additionalProperties: false, description: 'driver_id: manual assignment; without it, method names the strategy (auto: the site strategy)' },
);

export const AssignResult = Type.Object(
  {
    dispatch: DispatchResponse,
    job: Nullable(JobResponse),
    route: Nullable(RouteSummary),
    scheduled: Type.Boolean({ description: 'true: start_at is in the future, the dispatch waits for it' }),
  },
  { additionalProperties: false },
);

export const TeamJobBody = Type.Object(
  {
    job_id: Id,
    team_id: Id,
    route_id: Type.Optional(Id),
    vehicle_id: Type.Optional(Id),
    selection_strategy: Type.Optional(SelectionStrategySchema),
    require_confirmation: Type.Optional(RequireConfirmation),
    start_at: Type.Optional(StartAt),
  },
  { additionalProperties: false },
);

export const TeamJobResult = Type.Object(
  {
    dispatch: DispatchResponse,
    job: Nullable(JobResponse),
    route: Nullable(RouteSummary),
    scheduled: Type.Boolean(),
    selected_driver_id: Nullable(Type.String()),
    selected_driver_name: Nullable(Type.String()),
    selection_strategy: SelectionStrategySchema,
  },
  { additionalProperties: false },
);


/** The spec's result of a bulk call beside the detailed fields: `succeeded` (job ids) and `failed` (`failed_jobs` as {id, error, code}). */
const bulkParts = (succeeded: string) => ({ succeeded: Type.Array(Type.String(), { description: succeeded }), failed: Type.Array(BulkFailure) });

export const RouteDispatchBody = Type.Object(
  {
    route_id: Id,
    driver_id: Id,
    vehicle_id: Type.Optional(Id),
    method: Type.Optional(DispatchMethodSchema),
    require_confirmation: Type.Optional(RequireConfirmation),
    start_at: Type.Optional(StartAt),
  },
  { additionalProperties: false },
);

export const TeamRouteBody = Type.Object(
  {
    team_id: Id,
    route_id: Id,
    vehicle_id: Type.Optional(Id),
    selection_strategy: Type.Optional(SelectionStrategySchema),
    require_confirmation: Type.Optional(RequireConfirmation),
    start_at: Type.Optional(StartAt),
  },
  { additionalProperties: false },
);

export const RouteDispatchResult = Type.Object(
  {
    route: Nullable(RouteSummary),
    dispatched_job_ids: Type.Array(Type.String()),
    failed_jobs: Type.Array(FailedJob),
    ...bulkParts('the jobs dispatched (none while scheduled)'),
    selected_driver_id: Nullable(Type.String({ description: 'null while scheduled for a team (the pick happens at start_at)' })),
    selected_driver_name: Nullable(Type.String()),
    selection_strategy: Type.Optional(SelectionStrategySchema),
    scheduled: Type.Boolean({ description: 'true: start_at is in the future; nothing is dispatched yet, `dispatch` is the pending route record' }),
    dispatch: Nullable(DispatchResponse),
  },
  { additionalProperties: false },
);

export const BulkDistributeBody = Type.Object(
  {
    job_ids: Type.Array(Id, { minItems: 1, maxItems: 500 }),
    team_id: Id,
    optimize_routes: Type.Optional(
      Type.Boolean({ description: "assign and order the jobs with the route optimizer (capacity, shifts, time windows) instead of one load-balanced decision per job" }),
    ),
    time_budget_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 30_000, description: 'optimize_routes: the optimizer\'s time budget (default 1000)' })),
    require_confirmation: Type.Optional(RequireConfirmation),
    start_at: Type.Optional(StartAt),
  },
  { additionalProperties: false },
);

export const BulkDistributeResult = Type.Object(
  {
    routes: Type.Array(
      Type.Object(
        { route_id: Type.String(), driver_id: Type.String(), driver_name: Type.String(), optimized: Type.Boolean(), dispatched_job_ids: Type.Array(Type.String()) },
        { additionalProperties: false },
      ),
    ),
    failed_jobs: Type.Array(FailedJob),
    ...bulkParts('the jobs dispatched, or scheduled when start_at is in the future'),
    scheduled: Type.Boolean({ description: 'true: start_at is in the future; `dispatches` are the pending records, one per job' }),
    dispatches: Type.Array(DispatchResponse),
  },
  { additionalProperties: false },
);

export const PoolPostBody = Type.Object(
  {
    job_ids: Type.Array(Id, { minItems: 1, maxItems: 500 }),
    team_id: Type.Optional(Type.Union([Id, Type.Literal('')], { description: 'omitted or empty: the jobs float site-wide' })),
    start_at: Type.Optional(Type.String({ format: 'date-time', description: 'in the future: the offer shows from then' })),
  },
  { additionalProperties: false, description: 'no team_id (or an empty one): the jobs float site-wide' },
);

export const PoolPostResult = Type.Object(
  {
    succeeded: Type.Array(DispatchResponse),
    failed: Type.Array(BulkFailure),
  },
  { additionalProperties: false },
);

export const PoolJobResponse = Type.Object(
  { dispatch_id: Id, job: JobResponse, posted_at: Timestamp, team_id: Nullable(Type.String()) },
  { additionalProperties: false },
);

export const DispatchIdBody = Type.Object({ dispatch_id: Id }, { additionalProperties: false });

const availableFields = {
  job_id: Id,
  consider_schedule: Type.Optional(Type.Boolean({ description: 'default true' })),
  consider_conflicts: Type.Optional(Type.Boolean({ description: 'default true' })),
  exclude_unavailable: Type.Optional(Type.Boolean({ description: 'default false: unavailable drivers are listed with their reason' })),
  has_vehicle: Type.Optional(Type.Boolean()),
  operational_status: Type.Optional(OperationalStatusSchema),
  search_query: Type.Optional(Type.String({ maxLength: 200, description: 'name or email' })),
};

/** GET /dispatch/available-drivers takes its fields as a JSON body (as the spec shows) or as query parameters. */
export const AvailableDriversBody = Type.Object({ ...availableFields, job_id: Type.Optional(Id) }, { additionalProperties: false });
export const AvailableDriversQuery = AvailableDriversBody;

export const AvailableDriverEntry = Type.Object(
  {
    available: Type.Boolean(),
    unavailable_reason: Nullable(Type.Union([L('inactive'), L('off_schedule'), L('has_conflict'), L('capacity'), L('not_available')])),
    eta_to_job: Nullable(
      Type.Object({ duration_minutes: Type.Number(), estimated_arrival: Timestamp, distance_meters: Type.Number() }, { additionalProperties: false }),
    ),
    driver: Type.Object(
      { ...WorkerResponse.properties, availability: Type.String(), load: Type.Integer() },
      { additionalProperties: false, description: 'the worker (user with profile and dispatch details), its live availability and load' },
    ),
  },
  { additionalProperties: false },
);

export const DispatchSettingsResponse = Type.Object(
  { site_id: Id, strategy: SiteStrategySchema, auto_dispatch: Type.Boolean(), updated_at: Nullable(Timestamp) },
  { additionalProperties: false },
);

export const DispatchSettingsBody = Type.Object(
  { strategy: Type.Optional(SiteStrategySchema), auto_dispatch: Type.Optional(Type.Boolean({ description: 'dispatch new jobs continuously with the strategy' })) },
  { additionalProperties: false },
);

export const DispatchSearchQuery = {
  job_id: Type.Optional(Id),
  route_id: Type.Optional(Id),
  team_id: Type.Optional(Id),
  driver_id: Type.Optional(Id),
  method: Type.Optional(DispatchMethodSchema),
  status: Type.Optional(StatusSchema),
  is_active: Type.Optional(Type.Boolean()),
};
