import { initialTransition, transition } from 'xstate';
import type { EntityEvent, EntityMachine, EntitySnapshot } from './entity-machine.ts';
import type { Phase, Workflow } from './workflow.schema.ts';

/** What is stored of an actor: its state key. Context is empty by design: facts live in rows, not machines. */
export type PersistedEntitySnapshot = { value: string };

export function initialSnapshot(machine: EntityMachine): EntitySnapshot {
  return initialTransition(machine)[0];
}

export function restoreSnapshot(machine: EntityMachine, persisted: PersistedEntitySnapshot): EntitySnapshot {
  return machine.resolveState({ value: persisted.value, context: {} });
}

export function persistSnapshot(snapshot: EntitySnapshot): PersistedEntitySnapshot {
  return { value: String(snapshot.value) };
}

/**
 * Applies an event without side effects (XState's pure `transition`): the caller persists the result first and
 * only then replaces its cached snapshot, so a failed commit leaves nothing half-applied.
 * @returns null when the event is not allowed in this state for this role
 */
export function applyEvent(machine: EntityMachine, snapshot: EntitySnapshot, event: EntityEvent): EntitySnapshot | null {
  if (!snapshot.can(event)) return null;
  return transition(machine, snapshot, event)[0];
}

/** The workflow state an actor is in, and its phase (read from the state's tag). */
export function currentState(workflow: Workflow, snapshot: EntitySnapshot): { key: string; id: string; phase: Phase } {
  const key = String(snapshot.value);
  const state = workflow.states.find((s) => s.key === key)!;
  return { key, id: state.id, phase: state.phase };
}

/** The moves `role` may make now, for error messages and the timeline (requirements assumed met). */
export function allowedMoves(workflow: Workflow, snapshot: EntitySnapshot, role: EntityEvent['role']): { key: string; id: string }[] {
  const facts = { hasCancellationNotes: true, hasAttachment: true };
  return workflow.transitions
    .filter((t) => t.from === String(snapshot.value) && snapshot.can({ type: 'state.move', to: t.to, role, facts }))
    .map((t) => ({ key: t.to, id: workflow.states.find((s) => s.key === t.to)!.id }));
}
