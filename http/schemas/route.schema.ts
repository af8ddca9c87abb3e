import { Type } from 'typebox';
import { Clearable, Id, Nullable, Point, Timestamp } from './common.schema.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
export const ServiceDate = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD' });
const JobIds = Type.Array(Id, { maxItems: 200 });
const PHASE = Type.String({ pattern: '^(unassigned|assigned|in_progress|completed|cancelled)$' });

const StateView = Type.Object({ id: Type.String(), key: Type.String(), name: Type.String(), phase: Type.String() }, { additionalProperties: false });

const RouteStop = Type.Object(
  {
    id: Id,
    job_id: Id,
    type: Type.String(),
    order: Type.Integer({ minimum: 1, description: "the stop's place in the route, 1..n" }),
    workflow_state_id: Type.String(),
    phase: Type.String(),
    address: Type.Object({ id: Id, formatted_name: Type.String(), point: Point }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

export const RouteResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    name: Type.String(),
    driver_user_id: Nullable(Type.String()),
    vehicle_id: Nullable(Type.String()),
    team_id: Nullable(Type.String()),
    service_date: Type.String(),
    workflow_state_id: Type.String(),
    state: Nullable(StateView),
    phase: Type.String(),
    job_ids: Type.Array(Type.String(), { description: 'in route order (by their first stop)' }),
    stops: Type.Array(RouteStop, { description: 'in route order' }),
    planned_distance_meters: Type.Integer({ description: 'along the open stops in order (the site mapping provider)' }),
    planned_duration_seconds: Type.Integer({ description: 'travel time only, along the open stops in order' }),
    cancellation_notes: Nullable(Type.String()),
    created_by_user_id: Nullable(Type.String()),
    started_at: Nullable(Timestamp),
    completed_at: Nullable(Timestamp),
    version: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateRouteBody = Type.Object(
  {
    name: Type.Optional(Name),
    service_date: ServiceDate,
    driver_user_id: Clearable(Id),
    vehicle_id: Clearable(Id),
    team_id: Clearable(Id),
    job_ids: Type.Optional(Type.Array(Id, { maxItems: 200, description: 'first jobs, in order; a job on another route moves here' })),
  },
  { additionalProperties: false },
);

/** `POST /route/state`: a move of the route's workflow (the notes kept when it is cancelled). */
export const RouteStateBody = Type.Object(
  { route_id: Id, workflow_state_id: Id, cancellation_notes: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);

export const UpdateRouteBody = Type.Object(
  {
    id: Id,
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'optimistic check: 409 VERSION_CONFLICT when the route is at another version' })),
    name: Type.Optional(Name),
    service_date: Type.Optional(ServiceDate),
    driver_user_id: Clearable(Id),
    vehicle_id: Clearable(Id),
    team_id: Clearable(Id),
    remove_job_ids: Type.Optional(JobIds),
    add_job_ids: Type.Optional(JobIds),
    stop_ids: Type.Optional(Type.Array(Id, { maxItems: 1000, description: "the route's full new stop order, pickups before dropoffs of each job" })),
  },
  { additionalProperties: false },
);

export const RouteActionBody = Type.Object({ route_id: Id }, { additionalProperties: false });

export const RouteSearchFilters = {
  q: Type.Optional(Type.String({ maxLength: 200, description: 'matches the name' })),
  driver_user_id: Type.Optional(Id),
  vehicle_id: Type.Optional(Id),
  team_id: Type.Optional(Id),
  workflow_state_ids: Type.Optional(Type.Array(Id, { maxItems: 50 })),
  phase: Type.Optional(Type.Array(PHASE, { maxItems: 5 })),
  service_date_from: Type.Optional(ServiceDate),
  service_date_to: Type.Optional(ServiceDate),
};
