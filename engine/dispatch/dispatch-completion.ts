import { asJsonb } from '../../persistence/jsonb-order.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { COMPLETION_COLUMNS, COMPLETION_VALUE_COLUMNS, dispatchColumnValues } from './dispatch-columns.ts';
import type { DispatchRow, NewDispatch } from './dispatch-record.ts';

/*
 * A dispatch that completes a pending record this command already holds (a claimed pool offer: the claim's UPDATE
 * locked it and returned it) writes it in the dispatch's own statement, not in one of its own after it. Every form
 * below writes what `updateDispatch(scope, pending.id, fields, "status = 'pending' and is_active")` writes: the
 * COMPLETION_COLUMNS, `version + 1` and `updated_at`, under the same condition; the row before the change is
 * `pending` itself (no other transaction can change a row this one has locked).
 */

/** The completion's record arguments for the driver-day statement: the pending id and COMPLETION_VALUE_COLUMNS' values. */
export function completionValues(scope: CommandScope, pending: DispatchRow, fields: NewDispatch): { id: string; values: unknown[] } {
  return { id: pending.id, values: dispatchColumnValues(scope, fields, COMPLETION_VALUE_COLUMNS).values };
}

/** The completion as `update ... returning *`, for a CTE of another statement (`writeDispatchAtOnce`): no row when the record is no longer pending. */
export function dispatchCompletion(scope: CommandScope, pending: DispatchRow, fields: NewDispatch): { sql: string; params: unknown[] } {
  const { values } = dispatchColumnValues(scope, fields, COMPLETION_COLUMNS);
  return {
    sql: `update dispatch set ${COMPLETION_COLUMNS.map((column) => `${column} = ?`).join(', ')}, version = version + 1, updated_at = ?
     where id = ? and site_id = ? and status = 'pending' and is_active returning *`,
    params: [...values, new Date(), pending.id, scope.siteId],
  };
}

/**
 * The completed record as the statement writes it, for a dispatch planned from memory (its statement is not read):
 * `values` are `completionValues`' (decision as `jsonb` reads it back), `updated_at` the statement's `now`.
 */
export function completedRow(pending: DispatchRow, fields: NewDispatch, values: unknown[], routeId: string, now: Date): DispatchRow {
  const written = Object.fromEntries(COMPLETION_VALUE_COLUMNS.map((column, i) => [column, column === 'decision' ? asJsonb(fields.decision ?? null) : values[i]]));
  return { ...pending, ...written, route_id: routeId, version: pending.version + 1, updated_at: now };
}
