import { buildEntityMachine, type ActingRole, type EntitySnapshot } from '../../machines/entity-machine.ts';
import { applyEvent, currentState, persistSnapshot, restoreSnapshot } from '../../machines/entity-snapshot.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import type { CommandActor, CommandScope, EntityKind } from '../commands/apply-transition.ts';
import { recordMove } from '../commands/move-records.ts';
import type { JobRecord, StopRecord } from '../jobs/job-view.ts';
import type { RouteRecord } from '../routes/route-view.ts';

/** A `dispatch` phase move worked out before it is written (as `applyTransition` plans one). */
export type PlannedMove = {
  workflow: Workflow;
  next: EntitySnapshot;
  from: ReturnType<typeof currentState>;
  to: ReturnType<typeof currentState>;
  /** The columns the move writes: `workflow_state_id`, `phase`, `snapshot` (JSON text). */
  stateId: string;
  phase: string;
  snapshot: string;
};

/**
 * The workflow's `dispatch` move from state `key` for `role`, or null when the workflow refuses it. Undefined when
 * the move cannot be planned without reading the database: a job or stop workflow with a move that requires an
 * attachment (`applyTransition` reads that fact first; a route has none); the caller then takes the step-by-step path.
 */
export function planDispatchMove(workflow: Workflow, kind: EntityKind, key: string, role: ActingRole): PlannedMove | null | undefined {
  if (kind !== 'route' && workflow.transitions.some((t) => t.requires?.includes('attachment'))) return undefined;
  const machine = buildEntityMachine(workflow);
  const snapshot = restoreSnapshot(machine, { value: key });
  // The facts `applyTransition` gathers for a move without notes, when no move requires an attachment.
  const next = applyEvent(machine, snapshot, { type: `${kind}.dispatch`, role, facts: { hasCancellationNotes: false, hasAttachment: false } });
  if (!next) return null;
  const from = currentState(workflow, snapshot);
  const to = currentState(workflow, next);
  return { workflow, next, from, to, stateId: to.id, phase: to.phase, snapshot: JSON.stringify(persistSnapshot(next)) };
}

type Moved = { kind: 'job'; entity: JobRecord } | { kind: 'stop'; entity: StopRecord } | { kind: 'route'; entity: RouteRecord };

/** Records a written `dispatch` move as `applyTransition` records its moves, `moved` being the row as written. */
export function recordDispatchMove(scope: CommandScope, actor: CommandActor, moved: Moved, move: PlannedMove): void {
  const { workflow, from, to, next } = move;
  recordMove({ ...scope, actor }, { ...moved, workflow, from, to, next, eventType: `${moved.kind}.dispatch`, timestamp: scope.clock.now() });
}
