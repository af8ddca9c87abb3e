import type { TransitionRequest } from './apply-transition.ts';

/**
 * Which of a job's stops follow its move (their phases), how (DESIGN §2), and whether the stops it moves carry the
 * reason given with the job's move (their `cancellation_notes`).
 */
export type StopCascade = { phases: readonly string[]; request: TransitionRequest; passesReason: boolean };

/** A job's move as the cascade sees it: its phases before and after, and whether it is a failure (`isFailureMove`). */
export type JobPhaseMove = { from: string; to: string; failure: boolean };

const OPEN = ['unassigned', 'assigned', 'in_progress'] as const;
const STARTED = ['assigned', 'in_progress'] as const;
const PENDING = ['unassigned'] as const;

/**
 * The stops a job's move moves: cancelled, or failed (a failure move into the completed phase), its open stops are
 * cancelled with the move's reason (a failed job's stops will not be worked, and none may stay open under a job that
 * has ended); returned to unassigned, its assigned and started stops are returned; dispatched, its pending stops are
 * dispatched. Null when the move leaves its stops alone. One rule for both sides: the job's update reads (and locks)
 * the stops in these phases in the same statement when a cascade will need them, and the cascade moves them.
 */
export function stopCascadeOf({ from, to, failure }: JobPhaseMove): StopCascade | null {
  const ends = to === 'cancelled' || (failure && to === 'completed' && from !== 'completed');
  if (ends) return { phases: OPEN, request: { kind: 'phase', event: 'cancel' }, passesReason: true };
  if (to === 'unassigned' && from !== 'unassigned') return { phases: STARTED, request: { kind: 'phase', event: 'return' }, passesReason: false };
  if (to === 'assigned' && from === 'unassigned') return { phases: PENDING, request: { kind: 'phase', event: 'dispatch' }, passesReason: false };
  return null;
}
