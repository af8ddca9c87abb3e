import type { TransitionRequest } from './apply-transition.ts';

const TERMINAL = new Set(['completed', 'cancelled']);

/** Which of a job's stops follow its move, and how (DESIGN §2). */
export type StopCascade = { matches: (stopPhase: string) => boolean; request: TransitionRequest };

/**
 * The stops a job's move from phase `from` to `to` moves: cancelled, its open stops are cancelled; returned to
 * unassigned, its assigned and started stops are returned; dispatched, its pending stops are dispatched. Null when
 * the move leaves its stops alone. One rule for both sides: the job's update reads the stops in the same statement
 * when a cascade will need them, and the cascade moves them.
 */
export function stopCascadeOf(from: string, to: string): StopCascade | null {
  if (to === 'cancelled') return { matches: (phase) => !TERMINAL.has(phase), request: { kind: 'phase', event: 'cancel' } };
  if (to === 'unassigned' && from !== 'unassigned') return { matches: (phase) => phase === 'assigned' || phase === 'in_progress', request: { kind: 'phase', event: 'return' } };
  if (to === 'assigned' && from === 'unassigned') return { matches: (phase) => phase === 'unassigned', request: { kind: 'phase', event: 'dispatch' } };
  return null;
}
