import type { WorkflowState } from '../../machines/workflow.schema.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { COMPLETION_VALUE_COLUMNS, DISPATCH_COLUMN_TYPES, DISPATCH_VALUE_COLUMNS } from './dispatch-columns.ts';
import type { PlannedMove } from './dispatch-moves.ts';
import type { JobDispatchPlan } from './dispatch-plan.ts';
import type { DriverDay } from './driver-day-route.ts';
import type { NamedStatement } from './prepared-statement.ts';

/** The statement's parameters, in order (`$name` in the text below becomes `$n`), then the record's values (`d_<column>`). */
const COMMON_PARAMETERS = [
  'site', 'driver', 'service_date', 'now', 'user', 'job', 'job_version', 'job_state_id', 'job_phase', 'job_snapshot', 'stops',
  'route_id', 'route_name', 'route_workflow', 'route_state_id', 'route_phase', 'route_version', 'route_snapshot', 'vehicle', 'team',
  'dispatch_id',
] as const;
const PARAMETERS = [...COMMON_PARAMETERS, ...DISPATCH_VALUE_COLUMNS.map((column) => `d_${column}`)];
/** A pending record is completed with fewer values than a new one is inserted with (PREPARE refuses a parameter the text never uses). */
const COMPLETION_PARAMETERS = [...COMMON_PARAMETERS, ...COMPLETION_VALUE_COLUMNS.map((column) => `d_${column}`)];

const typed = (column: keyof typeof DISPATCH_COLUMN_TYPES) => `$d_${column}::${DISPATCH_COLUMN_TYPES[column]}`;
const dispatchValues = DISPATCH_VALUE_COLUMNS.map(typed).join(', ');

const INSERT_RECORD = `insert into dispatch (id, site_id, ${DISPATCH_VALUE_COLUMNS.join(', ')}, route_id, created_at, updated_at)
    select $dispatch_id::text, $site::text, ${dispatchValues}, c.id, $now::timestamptz, $now::timestamptz from chosen c returning *`;

/** The pending record `dispatch_id` completed as `updateDispatch` does (engine/dispatch/dispatch-completion.ts): no row when it is no longer pending. */
const COMPLETE_RECORD = `update dispatch set route_id = c.id, ${COMPLETION_VALUE_COLUMNS.map((column) => `${column} = ${typed(column)}`).join(', ')},
      version = dispatch.version + 1, updated_at = $now::timestamptz
    from chosen c where dispatch.id = $dispatch_id::text and (dispatch.site_id = $site::text) is true and dispatch.status = 'pending' and dispatch.is_active
    returning dispatch.*`;

/**
 * The dispatch to a driver's day (see `dispatchToDriverDay`), run after the driver-day lock. `target`: the driver's
 * open route of the day, oldest first, locked; found through the driver-day index (`route_driver_day_idx`, migration
 * 0027) and then by primary key (the `offset 0` keeps a generic plan from walking the site's routes in creation order
 * for the first match). A route is created (`created`) only when there is none and the
 * expected workflow is still the site's current one; one past its own `dispatch` move is joined (`joined`); either
 * way it is `chosen`, and everything else is written only when a route was chosen. Stops are one JSON parameter
 * (`[{id, version, state_id, phase, snapshot}]`), so the text is the same for any number of them. Their update names the
 * job too: a generic plan guesses 100 rows for `jsonb_to_recordset` and, joined by id alone, hashed every stop of the
 * table (a scan per dispatch that grew all day); by the job it reads the job's stops through `stop_job_idx`. The
 * route and the job found by id check their site with `is true`, a filter no index serves: on fresh statistics a
 * generic plan estimates one row for `site_id = $n` and took the smallest index leading with `site_id` (a walk of
 * the site's routes or jobs) over the primary key.
 */
const writes = (record: string) => `with target as (
    select * from route where id = (
        select r.id from (select id, created_at from route where driver_user_id = $driver::text and service_date = $service_date::text
          and (site_id = $site::text) is true and phase not in ('completed', 'cancelled') offset 0) r order by r.created_at, r.id limit 1)
      and (site_id = $site::text) is true and phase not in ('completed', 'cancelled') for update),
  current_workflow as (select id from workflow where site_id = $site::text and entity_type = 'route' and is_current),
  created as (
    insert into route (id, site_id, name, workflow_id, workflow_state_id, phase, version, snapshot, driver_user_id, vehicle_id, team_id, service_date, created_by_user_id, created_at, updated_at)
    select $route_id::text, $site::text, $route_name::text, w.id, $route_state_id::text, $route_phase::text, $route_version::int, $route_snapshot::jsonb,
      $driver::text, $vehicle::text, $team::text, $service_date::text, $user::text, $now::timestamptz, $now::timestamptz
    from current_workflow w where w.id = $route_workflow::text and not exists (select 1 from target)
    returning *),
  joined as (
    update route set version = route.version + 1, updated_at = $now::timestamptz
    where route.id = (select id from target where phase <> 'unassigned') and (route.site_id = $site::text) is true returning route.*),
  chosen as (select id from created union all select id from joined),
  placed as (
    insert into route_stop (stop_id, site_id, route_id, job_id, position)
    select s.id, s.site_id, c.id, s.job_id, coalesce((select max(position) from route_stop where route_id = c.id), 0) + row_number() over (order by s.sort_order, s.id)
    from stop s cross join chosen c where s.job_id = $job::text and s.site_id = $site::text),
  moved_stops as (
    update stop set workflow_state_id = v.state_id, phase = v.phase, snapshot = v.snapshot, version = stop.version + 1, updated_at = $now::timestamptz
    from jsonb_to_recordset($stops::jsonb) as v(id text, version int, state_id text, phase text, snapshot jsonb)
    where stop.id = v.id and stop.job_id = $job::text and stop.site_id = $site::text and stop.version = v.version and exists (select 1 from chosen) returning stop.*),
  also as (
    ${record}),
  job_row as (
    update job set route_id = c.id, driver_user_id = $driver::text, workflow_state_id = $job_state_id::text, phase = $job_phase::text,
      snapshot = $job_snapshot::jsonb, version = job.version + 2, updated_at = $now::timestamptz
    from chosen c where job.id = $job::text and (job.site_id = $site::text) is true and job.version = $job_version::int and job.deleted_at is null returning job.*)`;

const read = (record: string) => `${writes(record)}
  select (select to_jsonb(t) from target t) as target, (select id from current_workflow) as current_workflow_id, (select to_jsonb(j) from job_row j) as job_row,
    (select coalesce(json_agg(to_jsonb(m)), '[]'::json) from moved_stops m) as moved_stops,
    (select to_jsonb(r) from (select * from created union all select * from joined) r) as route_row, (select to_jsonb(a) from also a) as also_inserted`;

/** `$name::` as `$n::`, n from the name's place in `parameters` (every use is `$name::type`, so a name is never read as the start of a longer one). */
const numbered = (parameters: readonly string[], sql: string) => parameters.reduce((text, name, i) => text.replaceAll(`$${name}::`, `$${i + 1}::`), sql);

export const DRIVER_DAY_STATEMENT: NamedStatement = { name: 'dispatch_driver_day_v4', sql: numbered(PARAMETERS, read(INSERT_RECORD)) };

/** The same, completing the pending record `dispatch_id` (a claimed pool offer) instead of inserting one: arguments from `completionValues`. */
export const COMPLETING_DRIVER_DAY_STATEMENT: NamedStatement = { name: 'dispatch_driver_day_completing_v1', sql: numbered(COMPLETION_PARAMETERS, read(COMPLETE_RECORD)) };

/**
 * The same writes planned from memory (engine/dispatch/dispatch-planned.ts), sent with the command's next statement
 * and never read: they end in `dispatch_plan_holds` (migration 0023), which raises unless the route chosen is the
 * one planned (`planned_route`) at the version planned (`planned_version`; null: a route this statement creates),
 * and the job and every planned stop were written. Arguments: {@link driverDayArgs}, then those two.
 */
export const PLANNED_DRIVER_DAY_STATEMENT: NamedStatement = { name: 'dispatch_driver_day_planned_v4', sql: planned(PARAMETERS, INSERT_RECORD, 'exists (select 1 from job_row)') };

/**
 * The planned statement completing the pending record `dispatch_id`: an update that found no row fails silently,
 * so the check counts it with the job's (as "job written": the job and its record go together).
 */
export const PLANNED_COMPLETING_DRIVER_DAY_STATEMENT: NamedStatement = {
  name: 'dispatch_driver_day_planned_completing_v1',
  sql: planned(COMPLETION_PARAMETERS, COMPLETE_RECORD, 'exists (select 1 from job_row) and exists (select 1 from also)'),
};

function planned(parameters: readonly string[], record: string, jobWritten: string): string {
  return numbered(
    [...parameters, 'planned_route', 'planned_version'],
    `${writes(record)}
  select dispatch_plan_holds($planned_route::text, $planned_version::int, (select id from chosen), (select version from target),
    ${jobWritten}, jsonb_array_length($stops::jsonb), (select count(*)::int from moved_stops))`,
  );
}

type Input = {
  plan: JobDispatchPlan;
  day: DriverDay;
  driverUserId: string;
  routeId: string;
  /** The route workflow a new route starts in, with its initial state and planned `dispatch` move; null: create none. */
  workflowId: string | null;
  initial: WorkflowState | null;
  routeMove: PlannedMove | null;
  /** The record's id and values, in its statement's order: `dispatchColumnValues(..., DISPATCH_VALUE_COLUMNS)` or `completionValues`. */
  record: { id: string; values: unknown[] };
  /** `updated_at` (and a new route's `created_at`, the record's timestamps); now when omitted. */
  now?: Date;
};

/** The statement's arguments, in {@link PARAMETERS} order. */
export function driverDayArgs(scope: CommandScope, input: Input): unknown[] {
  const { plan, day, initial, routeMove } = input;
  const now = input.now ?? new Date();
  // The moves' snapshots are JSON text already: written into the array as they are.
  const stops = plan.stops.map(
    ({ stop, move }) => `{"id":${JSON.stringify(stop.id)},"version":${stop.version},"state_id":${JSON.stringify(move.stateId)},"phase":${JSON.stringify(move.phase)},"snapshot":${move.snapshot}}`,
  );
  const routeState = routeMove
    ? [routeMove.stateId, routeMove.phase, 2, routeMove.snapshot]
    : [initial?.id ?? null, initial?.phase ?? null, 1, initial ? JSON.stringify({ value: initial.key }) : null];
  return [
    scope.siteId, input.driverUserId, day.serviceDate, now, scope.actor.userId, plan.job.id, plan.job.version, plan.move.stateId, plan.move.phase, plan.move.snapshot,
    `[${stops.join(',')}]`, input.routeId, `Route ${day.serviceDate}`, input.workflowId, ...routeState, day.vehicleId, day.teamId, input.record.id, ...input.record.values,
  ];
}
