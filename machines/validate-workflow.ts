import { PHASES, type WorkflowState, type WorkflowTransitionValue } from './workflow.schema.ts';

const TERMINAL_PHASES = new Set(['completed', 'cancelled']);

/** A state as sent: a kept state carries its id, a new one none. */
type StateInput = Omit<WorkflowState, 'id'> & { id?: string };

/** One reason a workflow is unusable, with the path of the field it is about (`states.2.id`, `transitions.0.to`). */
export type WorkflowProblem = { field: string; message: string };

/**
 * Checks a workflow's shape beyond its schema. Returns every reason it is unusable (empty when valid), each naming
 * the field at fault: no or several initial states, duplicate keys or ids, moves naming unknown states or declared
 * twice, terminal states with outgoing moves, terminal flags that disagree with the phase, unreachable states, and
 * phases with no state.
 */
export function validateWorkflow(states: StateInput[], transitions: WorkflowTransitionValue[]): WorkflowProblem[] {
  const problems: WorkflowProblem[] = [];
  const keys = new Set<string>();
  const ids = new Set<string>();
  states.forEach((state, i) => {
    if (keys.has(state.key)) problems.push({ field: `states.${i}.key`, message: `state key ${state.key} is used twice` });
    keys.add(state.key);
    if (state.id !== undefined) {
      // Two states sharing an id would make every entity in that state ambiguous.
      if (ids.has(state.id)) problems.push({ field: `states.${i}.id`, message: `state id ${state.id} is used twice` });
      ids.add(state.id);
    }
    if (state.is_terminal !== TERMINAL_PHASES.has(state.phase)) {
      problems.push({ field: `states.${i}.is_terminal`, message: `state ${state.key} is in phase ${state.phase}, so it must ${state.is_terminal ? 'not ' : ''}be terminal` });
    }
  });
  const initial = states.flatMap((state, i) => (state.is_initial ? [{ state, i }] : []));
  if (initial.length === 0) problems.push({ field: 'states', message: 'no state is initial' });
  for (const extra of initial.slice(1)) {
    problems.push({ field: `states.${extra.i}.is_initial`, message: `only one state may be initial, not ${initial.map((s) => s.state.key).join(', ')}` });
  }
  const seen = new Set<string>();
  transitions.forEach((move, i) => {
    for (const end of ['from', 'to'] as const) {
      if (!keys.has(move[end])) problems.push({ field: `transitions.${i}.${end}`, message: `a move names the unknown state ${move[end]}` });
    }
    const id = `${move.from}->${move.to}`;
    if (seen.has(id)) problems.push({ field: `transitions.${i}`, message: `the move ${id} is declared twice` });
    seen.add(id);
    if (states.find((s) => s.key === move.from)?.is_terminal) {
      problems.push({ field: `transitions.${i}.from`, message: `terminal state ${move.from} has an outgoing move to ${move.to}` });
    }
  });
  if (initial.length === 1) {
    const start = initial[0]!.state.key;
    const reachable = reachableFrom(start, transitions);
    states.forEach((state, i) => {
      if (!reachable.has(state.key)) problems.push({ field: `states.${i}`, message: `state ${state.key} cannot be reached from ${start}` });
    });
  }
  for (const phase of PHASES) if (!states.some((s) => s.phase === phase)) problems.push({ field: 'states', message: `phase ${phase} has no state` });
  return problems;
}

function reachableFrom(start: string, transitions: WorkflowTransitionValue[]): Set<string> {
  const reached = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const move of transitions) {
      if (move.from === current && !reached.has(move.to)) {
        reached.add(move.to);
        queue.push(move.to);
      }
    }
  }
  return reached;
}
