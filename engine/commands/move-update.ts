import type { EntitySnapshot } from '../../machines/entity-machine.ts';
import { currentState, persistSnapshot } from '../../machines/entity-snapshot.ts';
import { isFailureMove } from '../../machines/failure-move.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import type { EntityKind } from './apply-transition.ts';

/**
 * What a move writes: the SQL (`?` placeholders), its values, and the columns it sets as the row will hold them; its
 * phases before and after, and whether it is a failure (`isFailureMove`).
 */
export type MoveUpdate = { sql: string; params: unknown[]; changes: EntityRow; jobReturned: boolean; from: string; to: string; failure: boolean };

/**
 * The versioned `update <kind> set ... where id = ? and site_id = ? and version = ?` (no `returning`) of a move from
 * `snapshot` to `next`, and the columns it changes (`changes`, the values `returning *` would show, so that a caller
 * that knows the row before can build the row after without reading it).
 */
export function moveUpdate(
  kind: EntityKind,
  target: { id: string; siteId: string; version: number },
  planned: { workflow: Workflow; snapshot: EntitySnapshot; next: EntitySnapshot; now: Date; event: { type: string } },
  notes: { cancellationNotes?: string },
): MoveUpdate {
  const to = currentState(planned.workflow, planned.next);
  const left = currentState(planned.workflow, planned.snapshot);
  const from = left.phase;
  const failure = isFailureMove(planned.workflow, left.key, to.key);
  const jobReturned = kind === 'job' && to.phase === 'unassigned' && from !== 'unassigned';
  const { now } = planned;
  const snapshot = JSON.stringify(persistSnapshot(planned.next));
  // updated_at as the ORM's onUpdate sets it: the wall clock, not the injected one.
  const updatedAt = new Date();
  const changes: EntityRow = {
    workflow_state_id: to.id,
    phase: to.phase,
    // As jsonb comes back from the database: plain JSON, no undefined members.
    snapshot: JSON.parse(snapshot) as unknown,
    version: target.version + 1,
    updated_at: updatedAt,
  };
  const sets = ['workflow_state_id = ?', 'phase = ?', 'snapshot = ?', 'version = version + 1', 'updated_at = ?'];
  const params: unknown[] = [to.id, to.phase, snapshot, updatedAt];
  const set = (column: string, value: unknown) => {
    sets.push(`${column} = ?`);
    params.push(value);
    changes[column] = value;
  };
  if (notes.cancellationNotes !== undefined && keepsReason(planned.workflow, left.key, to, failure)) set('cancellation_notes', notes.cancellationNotes);
  if (to.phase === 'completed') set('completed_at', now);
  // A route's first start is when its driver set out; a later restart keeps it (`changes` cannot know it: such a
  // move is never built from a known row without its `returning *`).
  if (kind === 'route' && to.phase === 'in_progress') {
    sets.push('started_at = coalesce(started_at, ?)');
    params.push(now);
  }
  if (kind === 'job' && to.phase === 'cancelled') set('cancelled_at', now);
  // A job returned to unassigned leaves its driver and route in the same write: one command, one new version, and
  // the state_change event already shows the job without them.
  if (jobReturned) {
    sets.push('driver_user_id = null', 'route_id = null');
    Object.assign(changes, { driver_user_id: null, route_id: null });
  }
  const where = kind === 'job' ? 'id = ? and site_id = ? and version = ? and deleted_at is null' : 'id = ? and site_id = ? and version = ?';
  params.push(target.id, target.siteId, target.version);
  return { sql: `update ${kind} set ${sets.join(', ')} where ${where}`, params, changes, jobReturned, from, to: to.phase, failure };
}

/**
 * Whether the entity keeps the reason given with its move (`cancellation_notes`): a move into the cancelled phase, a
 * failure (the `fail` phase event, or a move declared `event: 'fail'`), or a move whose transition requires the
 * reason. Another move's reason (a note given with a completion) is kept in its audit record only: it would read as
 * the reason the work did not happen.
 */
function keepsReason(workflow: Workflow, fromKey: string, to: { key: string; phase: string }, failure: boolean): boolean {
  if (to.phase === 'cancelled' || failure) return true;
  return workflow.transitions.some((t) => t.from === fromKey && t.to === to.key && t.requires?.includes('cancellation_notes') === true);
}
