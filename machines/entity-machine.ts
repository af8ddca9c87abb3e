import { setup, type SnapshotFrom } from 'xstate';
import { DEFAULT_MOVE_ROLES, type EntityType, type Phase, type PhaseEvent, type Requirement, type Workflow, type WorkflowTransitionValue } from './workflow.schema.ts';

/** Who asks for a move: a site role, or the engine itself applying a parent/child rule. */
export type ActingRole = 'admin' | 'dispatcher' | 'driver' | 'customer' | 'system';

/** Facts the engine gathers about a command so requirement guards can decide without I/O. */
export type MoveFacts = { hasCancellationNotes: boolean; hasAttachment: boolean };

export type EntityEvent =
  | { type: 'state.move'; to: string; role: ActingRole; facts: MoveFacts }
  | { type: `${EntityType}.${PhaseEvent}`; role: ActingRole; facts: MoveFacts };

type GuardParams = { to: string; roles: readonly string[] | null; requires: readonly Requirement[] };

/** Source and target phases of each phase event: which moves it may take. */
const PHASE_EVENT_RULES: Record<PhaseEvent, { from: readonly Phase[]; to: Phase }> = {
  dispatch: { from: ['unassigned'], to: 'assigned' },
  accept: { from: ['assigned'], to: 'assigned' },
  start: { from: ['unassigned', 'assigned'], to: 'in_progress' },
  complete: { from: ['unassigned', 'assigned', 'in_progress'], to: 'completed' },
  fail: { from: ['unassigned', 'assigned', 'in_progress'], to: 'completed' },
  cancel: { from: ['unassigned', 'assigned', 'in_progress'], to: 'cancelled' },
  return: { from: ['assigned', 'in_progress'], to: 'unassigned' },
};

const REQUIREMENT_CHECKS: Record<Requirement, (facts: MoveFacts) => boolean> = {
  cancellation_notes: (facts) => facts.hasCancellationNotes,
  attachment: (facts) => facts.hasAttachment,
};

const entitySetup = setup({
  types: { context: {} as Record<string, never>, events: {} as EntityEvent },
  guards: {
    /**
     * The one guard: the acting role is allowed (a move naming no roles: staff only, `DEFAULT_MOVE_ROLES`) and every
     * requirement holds. The system role is always allowed.
     */
    moveAllowed: ({ event }, params: GuardParams) => {
      if (event.type === 'state.move' && event.to !== params.to) return false;
      const roles: readonly string[] = params.roles ?? DEFAULT_MOVE_ROLES;
      if (event.role !== 'system' && !roles.includes(event.role)) return false;
      return params.requires.every((requirement) => REQUIREMENT_CHECKS[requirement](event.facts));
    },
  },
});

export type EntityMachine = ReturnType<typeof createMachineFor>;
export type EntitySnapshot = SnapshotFrom<EntityMachine>;

const cache = new Map<string, EntityMachine>();

/**
 * The XState machine of one workflow version: one state per workflow state (tagged with its phase, final when
 * terminal), `state.move` events guarded by the transition table and the acting role, and phase events
 * (`job.dispatch`, `stop.complete`, ...) mapped to this site's target for that phase. Cached per version id.
 */
export function buildEntityMachine(workflow: Workflow): EntityMachine {
  let machine = cache.get(workflow.id);
  if (!machine) {
    machine = createMachineFor(workflow);
    cache.set(workflow.id, machine);
  }
  return machine;
}

function createMachineFor(workflow: Workflow) {
  const initial = workflow.states.find((s) => s.is_initial)!;
  const states = Object.fromEntries(
    workflow.states.map((state) => {
      const outgoing = workflow.transitions.filter((t) => t.from === state.key);
      const on: Record<string, { target: string; guard: { type: 'moveAllowed'; params: GuardParams } }[]> = {
        'state.move': outgoing.map((t) => transitionTo(t)),
      };
      for (const [event, rule] of Object.entries(PHASE_EVENT_RULES) as [PhaseEvent, (typeof PHASE_EVENT_RULES)[PhaseEvent]][]) {
        if (!rule.from.includes(state.phase)) continue;
        const candidates = phaseEventTargets(workflow, outgoing, event, rule.to);
        if (candidates.length > 0) on[`${workflow.entityType}.${event}`] = candidates.map((t) => transitionTo(t));
      }
      return [state.key, { tags: [state.phase], ...(state.is_terminal ? { type: 'final' as const } : {}), on }];
    }),
  );
  return entitySetup.createMachine({ id: `${workflow.entityType}-${workflow.id}`, initial: initial.key, context: {}, states });
}

function transitionTo(move: WorkflowTransitionValue) {
  return {
    target: move.to,
    guard: { type: 'moveAllowed' as const, params: { to: move.to, roles: move.roles ?? null, requires: move.requires ?? [] } },
  };
}

/** Moves a phase event may take: those declared for it, else undeclared moves into its target phase. */
function phaseEventTargets(workflow: Workflow, outgoing: WorkflowTransitionValue[], event: PhaseEvent, to: Phase): WorkflowTransitionValue[] {
  const declared = outgoing.filter((t) => t.event === event);
  if (declared.length > 0) return declared;
  const phaseOf = (key: string) => workflow.states.find((s) => s.key === key)?.phase;
  return outgoing.filter((t) => t.event === undefined && phaseOf(t.to) === to && (event !== 'fail'));
}
