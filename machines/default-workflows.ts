import type { EntityType, Phase, WorkflowStateInputValue, WorkflowTransitionValue } from './workflow.schema.ts';

type Definition = { states: Omit<WorkflowStateInputValue, 'id'>[]; transitions: WorkflowTransitionValue[] };

function state(key: string, name: string, phase: Phase, isInitial = false): Omit<WorkflowStateInputValue, 'id'> {
  return { key, name, phase, is_initial: isInitial, is_terminal: phase === 'completed' || phase === 'cancelled' };
}

/** The workflows every new site starts with (DESIGN §2 and the engine issue). */
export const DEFAULT_WORKFLOWS: Record<EntityType, Definition> = {
  job: {
    states: [
      state('created', 'Created', 'unassigned', true),
      state('dispatched', 'Dispatched', 'assigned'),
      state('accepted', 'Accepted', 'assigned'),
      state('in_progress', 'In progress', 'in_progress'),
      state('completed', 'Completed', 'completed'),
      state('failed', 'Failed', 'completed'),
      state('cancelled', 'Cancelled', 'cancelled'),
    ],
    transitions: [
      { from: 'created', to: 'dispatched', roles: ['admin', 'dispatcher'] },
      { from: 'dispatched', to: 'accepted', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'dispatched', to: 'in_progress', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'accepted', to: 'in_progress', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'in_progress', to: 'completed', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'in_progress', to: 'failed', roles: ['admin', 'dispatcher', 'driver'], event: 'fail' },
      { from: 'dispatched', to: 'created', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'accepted', to: 'created', roles: ['admin', 'dispatcher', 'driver'] },
      ...['created', 'dispatched', 'accepted', 'in_progress'].map((from) => ({
        from,
        to: 'cancelled',
        roles: ['admin' as const, 'dispatcher' as const, 'customer' as const, ...(from === 'created' ? [] : ['driver' as const])],
      })),
    ],
  },
  stop: {
    states: [
      state('pending', 'Pending', 'unassigned', true),
      state('assigned', 'Assigned', 'assigned'),
      state('en_route', 'En route', 'in_progress'),
      state('arrived', 'Arrived', 'in_progress'),
      state('completed', 'Completed', 'completed'),
      state('failed', 'Failed', 'completed'),
      state('cancelled', 'Cancelled', 'cancelled'),
    ],
    transitions: [
      { from: 'pending', to: 'assigned', roles: ['admin', 'dispatcher'] },
      { from: 'assigned', to: 'en_route', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'en_route', to: 'arrived', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'arrived', to: 'completed', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'arrived', to: 'failed', roles: ['admin', 'dispatcher', 'driver'], event: 'fail' },
      { from: 'en_route', to: 'failed', roles: ['admin', 'dispatcher', 'driver'], event: 'fail' },
      { from: 'assigned', to: 'pending', roles: ['admin', 'dispatcher', 'driver'] },
      ...['pending', 'assigned', 'en_route', 'arrived'].map((from) => ({ from, to: 'cancelled', roles: ['admin' as const, 'dispatcher' as const, 'driver' as const] })),
    ],
  },
  route: {
    states: [
      state('planned', 'Planned', 'unassigned', true),
      state('dispatched', 'Dispatched', 'assigned'),
      state('in_progress', 'In progress', 'in_progress'),
      state('completed', 'Completed', 'completed'),
      state('cancelled', 'Cancelled', 'cancelled'),
    ],
    transitions: [
      { from: 'planned', to: 'dispatched', roles: ['admin', 'dispatcher'] },
      { from: 'dispatched', to: 'in_progress', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'in_progress', to: 'completed', roles: ['admin', 'dispatcher', 'driver'] },
      { from: 'dispatched', to: 'planned', roles: ['admin', 'dispatcher'] },
      ...['planned', 'dispatched', 'in_progress'].map((from) => ({ from, to: 'cancelled', roles: ['admin' as const, 'dispatcher' as const] })),
    ],
  },
};
