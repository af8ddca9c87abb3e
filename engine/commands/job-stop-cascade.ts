import type { TransitionRequest } from './apply-transition.ts';

/** Which of a job's stops follow its move (their phases), and how (DESIGN §2). */
export type StopCascade = { phases: readonly string[]; request: TransitionRequest };

const OPEN = ['unassigned', 'assigned', 'in_progress'] as const;
const STARTED = ['assigned', 'in_progress'] as const;
const PENDING = ['unassigned'] as const;

/**
 * The stops a job's move from phase `from` to `to` moves: cancelled, its open stops are cancelled; returned to
 * unassigned, its assigned and started stops are returned; dispatched, its pending stops are dispatched. Null when
 * the move leaves its stops alone. One rule for both sides: the job's update reads (and locks) the stops in these
 * phases in the same statement when a cascade will need them, and the cascade moves them.
 */
export function stopCascadeOf(from: string, to: string): StopCascade | null {
  if (to === 'cancelled') return { phases: OPEN, request: { kind: 'phase', event: 'cancel' } };
  if (to === 'unassigned' && from !== 'unassigned') return { phases: STARTED, request: { kind: 'phase', event: 'return' } };
  if (to === 'assigned' && from === 'unassigned') return { phases: PENDING, request: { kind: 'phase', event: 'dispatch' } };
  return null;
}
