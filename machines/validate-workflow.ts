import { PHASES, type WorkflowState, type WorkflowTransitionValue } from './workflow.schema.ts';

const TERMINAL_PHASES = new Set(['completed', 'cancelled']);

/**
 * Checks a workflow's shape beyond its schema. Returns every reason it is unusable (empty when valid): no or several
 * initial states, duplicate keys, moves naming unknown states, terminal states with outgoing moves, terminal flags
 * that disagree with the phase, unreachable states, and phases with no state.
 */
export function validateWorkflow(states: Omit<WorkflowState, 'id'>[], transitions: WorkflowTransitionValue[]): string[] {
  const reasons: string[] = [];
  const keys = new Set<string>();
  for (const state of states) {
    if (keys.has(state.key)) reasons.push(`state key ${state.key} is used twice`);
    keys.add(state.key);
    if (state.is_terminal !== TERMINAL_PHASES.has(state.phase)) {
      reasons.push(`state ${state.key} is in phase ${state.phase}, so it must ${state.is_terminal ? 'not ' : ''}be terminal`);
    }
  }
  const initial = states.filter((s) => s.is_initial);
  if (initial.length === 0) reasons.push('no state is initial');
  if (initial.length > 1) reasons.push(`only one state may be initial, not ${initial.map((s) => s.key).join(', ')}`);
  const seen = new Set<string>();
  for (const move of transitions) {
    for (const end of [move.from, move.to]) if (!keys.has(end)) reasons.push(`a move names the unknown state ${end}`);
    const id = `${move.from}->${move.to}`;
    if (seen.has(id)) reasons.push(`the move ${id} is declared twice`);
    seen.add(id);
    if (states.find((s) => s.key === move.from)?.is_terminal) reasons.push(`terminal state ${move.from} has an outgoing move to ${move.to}`);
  }
  if (initial.length === 1) {
    const reachable = reachableFrom(initial[0]!.key, transitions);
    for (const state of states) if (!reachable.has(state.key)) reasons.push(`state ${state.key} cannot be reached from ${initial[0]!.key}`);
  }
  for (const phase of PHASES) if (!states.some((s) => s.phase === phase)) reasons.push(`phase ${phase} has no state`);
  return reasons;
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
