import type { Workflow } from '../../machines/workflow.schema.ts';
import type { EntityRow } from '../jobs/job-view.ts';

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
// The ORM parses timestamptz text the same way (`new Date(value)`).
const date = (value: unknown): Date | null => (value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value)));
const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** A `route` row (raw SQL, snake_case) as the fields the command path and the views read. */
export function routeFromRow(row: EntityRow) {
  return {
    id: String(row.id),
    siteId: String(row.site_id),
    name: String(row.name),
    workflowId: String(row.workflow_id),
    workflowStateId: String(row.workflow_state_id),
    phase: String(row.phase),
    version: Number(row.version),
    snapshot: row.snapshot,
    driverUserId: text(row.driver_user_id),
    vehicleId: text(row.vehicle_id),
    teamId: text(row.team_id),
    serviceDate: String(row.service_date),
    cancellationNotes: text(row.cancellation_notes),
    createdByUserId: text(row.created_by_user_id),
    startedAt: date(row.started_at),
    completedAt: date(row.completed_at),
    createdAt: date(row.created_at)!,
    updatedAt: date(row.updated_at)!,
  };
}

export type RouteRecord = ReturnType<typeof routeFromRow>;

export const TERMINAL_PHASES: ReadonlySet<string> = new Set(['completed', 'cancelled']);

/** The route's own fields as the API and the events show them (the detail view adds its jobs, stops and plan). */
export function toRouteData(route: RouteRecord, workflow: Workflow) {
  const state = workflow.states.find((s) => s.id === route.workflowStateId);
  return {
    id: route.id,
    site_id: route.siteId,
    name: route.name,
    driver_user_id: route.driverUserId,
    vehicle_id: route.vehicleId,
    team_id: route.teamId,
    service_date: route.serviceDate,
    workflow_state_id: route.workflowStateId,
    state: state ? { id: state.id, key: state.key, name: state.name, phase: state.phase } : null,
    phase: route.phase,
    cancellation_notes: route.cancellationNotes,
    created_by_user_id: route.createdByUserId,
    started_at: iso(route.startedAt),
    completed_at: iso(route.completedAt),
    version: route.version,
    created_at: route.createdAt.toISOString(),
    updated_at: route.updatedAt.toISOString(),
  };
}

export type RouteData = ReturnType<typeof toRouteData>;
