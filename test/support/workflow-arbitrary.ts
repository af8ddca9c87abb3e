import * as fc from 'fast-check';
import { DEFAULT_MOVE_ROLES, type Phase, type WorkflowTransitionValue } from '../../machines/workflow.schema.ts';

export const ROLES = ['admin', 'dispatcher', 'driver', 'customer'] as const;
export type Role = (typeof ROLES)[number];

export type GeneratedState = { key: string; name: string; phase: Phase; is_initial: boolean; is_terminal: boolean };
export type GeneratedWorkflow = { states: GeneratedState[]; transitions: WorkflowTransitionValue[] };

/**
 * Random workflows that are valid by construction: every phase has a state, one initial state, terminal states only
 * in the completed and cancelled phases, and every state reachable (each state gets a move from an earlier
 * non-terminal state), plus random extra moves with random role lists (absent = every staff role); some moves into
 * the completed phase are declared failures (`event: 'fail'`).
 */
export const workflowArbitrary: fc.Arbitrary<GeneratedWorkflow> = fc
  .record({
    counts: fc.tuple(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 1 })),
    parents: fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
    extras: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 10 }),
    roles: fc.array(fc.option(fc.subarray([...ROLES], { minLength: 1 }), { nil: undefined }), { minLength: 24, maxLength: 24 }),
    failures: fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
  })
  .map(({ counts, parents, extras, roles, failures }) => {
    const phases: Phase[] = ['unassigned', 'assigned', 'in_progress', 'completed', 'cancelled'];
    const states: GeneratedState[] = [];
    phases.forEach((phase, p) => {
      for (let i = 0; i < counts[p]!; i += 1) {
        const terminal = phase === 'completed' || phase === 'cancelled';
        states.push({ key: `s${states.length}`, name: `S${states.length}`, phase, is_initial: states.length === 0, is_terminal: terminal });
      }
    });
    const moves = new Map<string, WorkflowTransitionValue>();
    const add = (from: GeneratedState, to: GeneratedState) => {
      const id = `${from.key}->${to.key}`;
      if (from.is_terminal || from.key === to.key || moves.has(id)) return;
      const allowed = roles[moves.size % roles.length];
      const failure = to.phase === 'completed' && failures[moves.size % failures.length] === true;
      moves.set(id, { from: from.key, to: to.key, ...(allowed ? { roles: allowed } : {}), ...(failure ? { event: 'fail' as const } : {}) });
    };
    states.forEach((state, index) => {
      if (index === 0) return;
      const earlier = states.slice(0, index).filter((s) => !s.is_terminal);
      add(earlier[parents[index % parents.length]! % earlier.length]!, state);
    });
    for (const [a, b] of extras) add(states[a % states.length]!, states[b % states.length]!);
    return { states, transitions: [...moves.values()] };
  });

/** A random walk: each step tries a move to some state as some role. */
export const walkArbitrary = fc.array(fc.tuple(fc.nat(), fc.constantFrom(...ROLES)), { minLength: 4, maxLength: 14 });

/** Whether the table declares `from → to` for `role`. */
export function isDeclared(workflow: GeneratedWorkflow, from: string, to: string, role: Role): boolean {
  const allows = (roles: readonly Role[]) => roles.includes(role);
  return workflow.transitions.some((t) => t.from === from && t.to === to && allows(t.roles ?? DEFAULT_MOVE_ROLES));
}

/** Whether the table declares `from → to` as a failure (`event: 'fail'`). */
export function isFailure(workflow: GeneratedWorkflow, from: string, to: string): boolean {
  return workflow.transitions.some((t) => t.from === from && t.to === to && t.event === 'fail');
}
