import { initialTransition } from 'xstate';
import type { EntityEvent, EntityMachine, EntitySnapshot } from './entity-machine.ts';
import type { Phase, Requirement, Workflow } from './workflow.schema.ts';

/** What is stored of an actor: its state key. Context is empty by design: facts live in rows, not machines. */
export type PersistedEntitySnapshot = { value: string };

/** Initial snapshots per machine, shared as {@link snapshotOf}'s are (an entity machine's initial state has no actions). */
const initialByMachine = new WeakMap<EntityMachine, EntitySnapshot>();

/**
 * The snapshot a new entity starts in. Computed once per machine: `initialTransition` starts an actor each time, which
 * cost a job's creation (the job and each stop) about 6% of its CPU.
 */
export function initialSnapshot(machine: EntityMachine): EntitySnapshot {
  let snapshot = initialByMachine.get(machine);
  if (!snapshot) {
    snapshot = initialTransition(machine)[0];
    initialByMachine.set(machine, snapshot);
  }
  return snapshot;
}

/**
 * Snapshots per machine and state key. An entity machine has no context, no actions and no children, so its
 * snapshot is fully determined by its state: every actor in one state can share one (immutable) snapshot object,
 * which saves resolving it again on each rehydration and each move.
 */
const snapshotsByMachine = new WeakMap<EntityMachine, Map<string, EntitySnapshot>>();

function snapshotOf(machine: EntityMachine, value: string): EntitySnapshot {
  let snapshots = snapshotsByMachine.get(machine);
  if (!snapshots) snapshotsByMachine.set(machine, (snapshots = new Map()));
  let snapshot = snapshots.get(value);
  if (!snapshot) {
    // Throws on a state the machine does not have, before anything is cached.
    snapshot = machine.resolveState({ value, context: {} });
    snapshots.set(value, snapshot);
  }
  return snapshot;
}

export function restoreSnapshot(machine: EntityMachine, persisted: PersistedEntitySnapshot): EntitySnapshot {
  return snapshotOf(machine, persisted.value);
}

export function persistSnapshot(snapshot: EntitySnapshot): PersistedEntitySnapshot {
  return { value: String(snapshot.value) };
}

/**
 * Applies an event without side effects: the caller persists the result first and only then replaces its cached
 * snapshot, so a failed commit leaves nothing half-applied. The transition XState would take is the one its
 * `getTransitionData` selects (the first candidate whose guard passes, as `can` and `transition` select it);
 * since entity machines are flat and carry no actions or context, the next snapshot is the target state's, which
 * spares `transition` creating an actor per event (8% of the command path's CPU).
 * @returns null when the event is not allowed in this state for this role
 */
export function applyEvent(machine: EntityMachine, snapshot: EntitySnapshot, event: EntityEvent): EntitySnapshot | null {
  const taken = machine.getTransitionData(snapshot, event).find((t) => t.target !== undefined && t.target.length > 0);
  if (!taken) return null;
  return snapshotOf(machine, taken.target![0]!.key);
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

const ALL_MET = { hasCancellationNotes: true, hasAttachment: true };
const FACT_OF: Record<Requirement, keyof typeof ALL_MET> = { cancellation_notes: 'hasCancellationNotes', attachment: 'hasAttachment' };

/**
 * The requirements that alone kept `event` from moving the actor: empty when it moves, or when it would be refused
 * with every requirement met (a move the workflow does not have, or not for this role).
 */
export function missingRequirements(workflow: Workflow, machine: EntityMachine, snapshot: EntitySnapshot, event: EntityEvent): Requirement[] {
  if (applyEvent(machine, snapshot, event)) return [];
  const met = applyEvent(machine, snapshot, { ...event, facts: ALL_MET });
  if (!met) return [];
  const from = String(snapshot.value);
  const to = String(met.value);
  const required = new Set(workflow.transitions.filter((t) => t.from === from && t.to === to).flatMap((t) => t.requires ?? []));
  return [...required].filter((requirement) => !event.facts[FACT_OF[requirement]]);
}
