import { Type, type Static } from 'typebox';

/** The five fixed lifecycle phases every workflow state belongs to (DESIGN §2). */
export const PHASES = ['unassigned', 'assigned', 'in_progress', 'completed', 'cancelled'] as const;
export type Phase = (typeof PHASES)[number];

export const ENTITY_TYPES = ['job', 'stop', 'route'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** Phase events: what the engine and the dispatch methods ask for, mapped to each site's own target state. */
export const PHASE_EVENTS = ['dispatch', 'accept', 'start', 'complete', 'fail', 'cancel', 'return'] as const;
export type PhaseEvent = (typeof PHASE_EVENTS)[number];

/** Requirements a transition may name; each is a registered guard, never code from the workflow. */
export const REQUIREMENTS = ['cancellation_notes', 'attachment'] as const;
export type Requirement = (typeof REQUIREMENTS)[number];

/**
 * Who may make a move whose `roles` is absent: staff only. A move an admin adds without naming roles must not open
 * the entity to its customer or driver; they are let in only by naming them.
 */
export const DEFAULT_MOVE_ROLES = ['admin', 'dispatcher'] as const;

export const StateKey = Type.String({ pattern: '^[a-z][a-z0-9_]{0,47}$', description: 'machine-readable state name' });
const RoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('dispatcher'), Type.Literal('driver'), Type.Literal('customer')]);

export const WorkflowStateInput = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^wfs_[0-9A-Z]{26}$', description: 'keep an existing state: its id' })),
    key: StateKey,
    name: Type.String({ minLength: 1, maxLength: 100 }),
    phase: Type.Union([Type.Literal('unassigned'), Type.Literal('assigned'), Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('cancelled')]),
    is_initial: Type.Boolean(),
    is_terminal: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const WorkflowTransition = Type.Object(
  {
    from: StateKey,
    to: StateKey,
    roles: Type.Optional(Type.Array(RoleSchema, { description: 'who may make this move; absent: every staff role (admin, dispatcher), never a driver or a customer' })),
    requires: Type.Optional(Type.Array(Type.Union([Type.Literal('cancellation_notes'), Type.Literal('attachment')]))),
    event: Type.Optional(
      Type.Union(
        [Type.Literal('dispatch'), Type.Literal('accept'), Type.Literal('start'), Type.Literal('complete'), Type.Literal('fail'), Type.Literal('cancel'), Type.Literal('return')],
        { description: 'the phase event this move serves when several fit (e.g. fail vs complete)' },
      ),
    ),
  },
  { additionalProperties: false },
);

export type WorkflowStateInputValue = Static<typeof WorkflowStateInput>;
export type WorkflowTransitionValue = Static<typeof WorkflowTransition>;

/** A state as stored: always with its site-specific id. */
export type WorkflowState = Omit<WorkflowStateInputValue, 'id' | 'phase'> & { id: string; phase: Phase };

/** One immutable version of a site's workflow for one entity type. */
export type Workflow = {
  id: string;
  entityType: EntityType;
  version: number;
  states: WorkflowState[];
  transitions: WorkflowTransitionValue[];
};
