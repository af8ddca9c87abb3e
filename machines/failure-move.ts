import type { Workflow } from './workflow.schema.ts';

/**
 * Whether the move from state `fromKey` to `toKey` is a failure: its transition is declared `event: 'fail'` (as the
 * default workflows' `failed`). The `fail` phase event takes only such moves, and a workflow declares each
 * `from -> to` once, so the two states tell it whichever way the move was asked for.
 */
export function isFailureMove(workflow: Workflow, fromKey: string, toKey: string): boolean {
  return workflow.transitions.some((t) => t.from === fromKey && t.to === toKey && t.event === 'fail');
}
