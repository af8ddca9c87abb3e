import { newId } from '../../persistence/ids.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import type { NewDispatch } from './dispatch-record.ts';

/** A dispatch record's columns, as a new record's insert writes them (besides id, site and timestamps). */
export const DISPATCH_COLUMNS = [
  'job_id', 'route_id', 'team_id', 'assigned_to_driver_id', 'assigned_to_vehicle_id', 'method', 'status', 'require_confirmation',
  'driver_accepted', 'driver_accepted_at', 'dispatch_at', 'dispatched_at', 'completed_at', 'posted_at', 'decision', 'plan', 'created_by_user_id',
] as const;
type Column = (typeof DISPATCH_COLUMNS)[number];

/** Each column's SQL type, for a statement that takes the values as parameters (`dispatchColumnValues`). */
export const DISPATCH_COLUMN_TYPES: Record<Column, string> = {
  job_id: 'text', route_id: 'text', team_id: 'text', assigned_to_driver_id: 'text', assigned_to_vehicle_id: 'text', method: 'text', status: 'text',
  require_confirmation: 'boolean', driver_accepted: 'boolean', driver_accepted_at: 'timestamptz', dispatch_at: 'timestamptz', dispatched_at: 'timestamptz',
  completed_at: 'timestamptz', posted_at: 'timestamptz', decision: 'jsonb', plan: 'jsonb', created_by_user_id: 'text',
};

/** The columns a new record's insert writes besides id, site, route and timestamps (`dispatchColumnValues` order). */
export const DISPATCH_VALUE_COLUMNS = DISPATCH_COLUMNS.filter((c) => c !== 'route_id');

/** The columns a dispatch writes when it completes a pending record (a claimed pool offer) instead of inserting one. */
export const COMPLETION_COLUMNS = [
  'job_id', 'route_id', 'team_id', 'assigned_to_driver_id', 'assigned_to_vehicle_id', 'status', 'require_confirmation', 'driver_accepted',
  'driver_accepted_at', 'dispatched_at', 'decision',
] as const satisfies readonly Column[];

export type CompletionColumn = (typeof COMPLETION_COLUMNS)[number];

/** The completion's columns besides the route (the statement that chooses the route writes it). */
export const COMPLETION_VALUE_COLUMNS = COMPLETION_COLUMNS.filter((c) => c !== 'route_id');

/**
 * A new record's id and values as `dispatchInsert` writes them: `values` in `columns` order (decision and plan as
 * JSON text, unset flags false, the rest null), the acting user as its creator unless given.
 */
export function dispatchColumnValues(scope: CommandScope, values: NewDispatch, columns: readonly Column[] = DISPATCH_COLUMNS): { id: string; values: unknown[] } {
  const row: Record<string, unknown> = { ...values, created_by_user_id: values.created_by_user_id ?? scope.actor.userId };
  return {
    id: newId('dispatch'),
    values: columns.map((c) => (c === 'decision' || c === 'plan' ? JSON.stringify(row[c] ?? null) : (row[c] ?? (c === 'require_confirmation' || c === 'driver_accepted' ? false : null)))),
  };
}
