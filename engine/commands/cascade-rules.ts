import { recordAcceptanceOfDriverMove } from '../dispatch/driver-move-acceptance.ts';
import { checkDriverLoadOnEntry } from '../dispatch/driver-load-check.ts';
import type { EntityRow, JobRecord, StopRecord } from '../jobs/job-view.ts';
import { afterJobLeavesRoute, afterJobMove, afterRouteMove, type CascadeMove } from '../routes/route-cascades.ts';
import { sendWithNext } from '../runtime/deferred-writes.ts';
import { applyKnownIfAllowed, applyTransition, stopsReadWithMove, type Applied, type CommandScope, type EntityKind, type TransitionRequest } from './apply-transition.ts';
import { stopCascadeOf, type StopCascade } from './job-stop-cascade.ts';
import { knownRow, knownStopPhases } from './move-reads.ts';
import { isRefusedMove } from './move-refusal.ts';

const TERMINAL = new Set(['completed', 'cancelled']);

/**
 * The parent/child rules (DESIGN §2), applied in the same transaction as the command that triggered them, acting
 * as the system on behalf of the caller:
 * - a job cancelled, or failed, cancels its open stops (with the move's reason); a job returned to unassigned returns its assigned stops (it leaves its
 *   route and driver in the transition's own write); a job dispatched dispatches its pending stops;
 * - a driver's own move of their job out of waiting for confirmation records their acceptance on its dispatch;
 * - a stop started starts its job; when every stop of a job is terminal the job completes (or is cancelled when no
 *   stop was completed);
 * - a returned job's stops leave its route's order; when every job of a route is terminal the route completes (or
 *   is cancelled when no job was completed); a route cancelled releases its open jobs (see `route-cascades.ts`).
 * When the command began by reading a stop move's rows (`readStopMove`), the rules decide from those rows while
 * they still hold, instead of reading them again.
 */
export async function applyCascades(scope: CommandScope, applied: Applied, notes: { cancellationNotes?: string }): Promise<void> {
  const system = { ...scope, actor: { ...scope.actor, role: 'system' as const } };
  if (applied.kind === 'route') return afterRouteMove(system, applied, cascadeMove);
  if (applied.kind === 'job') {
    const cascade = stopCascadeOf({ from: applied.from.phase, to: applied.to.phase, failure: applied.failure });
    // Only a cancellation or a failure passes its notes on to the stops it cancels.
    if (cascade) await eachStop(system, applied, cascade, cascade.passesReason ? notes : {});
    await recordAcceptanceOfDriverMove(scope, applied);
    await afterJobMove(system, applied, cascadeMove);
    return;
  }
  const jobId = (applied.entity as StopRecord).jobId;
  if (applied.to.phase === 'in_progress') await startJob(system, jobId);
  if (TERMINAL.has(applied.to.phase) && applied.from.phase !== applied.to.phase) {
    const phases = await stopPhasesAfter(system, applied, jobId);
    if (phases.every((phase) => TERMINAL.has(phase))) {
      const known = knownRow(system, jobId);
      const [jobPhase] = known ? [String(known.phase)] : await phasesOf(system, 'select phase from job where id = ? and site_id = ?', jobId);
      if (jobPhase !== undefined && !TERMINAL.has(jobPhase)) {
        const anyDone = phases.includes('completed');
        if (anyDone && jobPhase === 'assigned') await attempt(system, jobId, { kind: 'phase', event: 'start' });
        await attempt(system, jobId, { kind: 'phase', event: anyDone ? 'complete' : 'cancel' });
      }
    }
  }
}

/**
 * The rules for a job leaving its route outside a move (an unassigned job deleted), as the system: the route records
 * it, and completes or is cancelled when every job left on it has ended (see `afterJobLeavesRoute`).
 */
export async function releaseJobFromRoute(scope: CommandScope, jobId: string): Promise<void> {
  await afterJobLeavesRoute({ ...scope, actor: { ...scope.actor, role: 'system' } }, jobId, cascadeMove);
}

/**
 * The phases of the job's stops after `applied`. Rows that leave another stop open are not trusted as they are: a
 * driver completing that stop at the same moment read this one open as well (READ COMMITTED), and both would leave
 * the job open for good. So the moves of one job's stops take turns (a transaction-level advisory lock on the job)
 * and look at the phases again once the lock is held: of two such moves the second sees the first's stop (the lock's
 * key is `job_stops_turn_key`, migration 0035, which both ways below take). When the stop move's reads tell the
 * phases, that look is `job_stops_left_open` (migration 0034), queued with the command's next statement (the COMMIT,
 * as a rule): it fails the command, which runs again on reads, if every stop ended meanwhile; no round trip of its
 * own. Otherwise the phases are read under the lock, which travels with that read.
 * Not the job row's lock: a move holds its stop and an office's cancel holds the job while it cancels the stops, so
 * that order deadlocked on every concurrent pair.
 */
async function stopPhasesAfter(scope: CommandScope, applied: Applied, jobId: string): Promise<string[]> {
  const known = knownStopPhases(scope, applied);
  if (known?.every((phase) => TERMINAL.has(phase))) return known;
  if (known) {
    await sendWithNext(scope.em, 'select job_stops_left_open(?, ?)', [jobId, scope.siteId]);
    return known;
  }
  await sendWithNext(scope.em, 'select pg_advisory_xact_lock(job_stops_turn_key(?, ?))', [jobId, scope.siteId]);
  return phasesOf(scope, 'select phase from stop where job_id = ? and site_id = ?', jobId);
}

const phasesOf = async (scope: CommandScope, sql: string, jobId: string): Promise<string[]> =>
  (await scope.em.execute<{ phase: string }[]>(sql, [jobId, scope.siteId])).map((row) => row.phase);

/**
 * Moves the job's stops the cascade names, in their order. The job's own update read and locked them
 * (`stopsReadWithMove`), so their updates go out with the command's next statement (`applyKnownIfAllowed`).
 */
async function eachStop(scope: CommandScope, applied: Applied, cascade: StopCascade, notes: { cancellationNotes?: string }): Promise<void> {
  const locked = stopsReadWithMove(applied);
  const rows =
    locked ??
    (await scope.em.execute<EntityRow[]>('select * from stop where job_id = ? and site_id = ? order by sort_order asc', [applied.entity.id, scope.siteId]));
  for (const row of rows) {
    if (cascade.phases.includes(String(row.phase))) await applyKnownIfAllowed(scope, 'stop', row, cascade.request, notes, locked !== undefined);
  }
}

/** A rule's move is made only when the site's workflow allows it; otherwise the rule simply does not apply. */
async function attempt(scope: CommandScope, jobId: string, request: TransitionRequest): Promise<void> {
  const applied = await tryApply(scope, 'job', jobId, request, {});
  if (applied) await applyCascades(scope, applied, {});
}

/**
 * "A stop started starts its job". A custom workflow may let a job start straight from unassigned, with the driver
 * it was created for: that job then takes one of the driver's max_load slots, checked as a dispatch checks it.
 */
async function startJob(scope: CommandScope, jobId: string): Promise<void> {
  const applied = await tryApply(scope, 'job', jobId, { kind: 'phase', event: 'start' }, {});
  if (!applied) return;
  await checkDriverLoadOnEntry(scope, applied.entity as JobRecord, applied.from.phase, applied.to.phase);
  await applyCascades(scope, applied, {});
}

/** A rule's move on any kind, with its own cascades; null when the workflow does not allow it. */
const cascadeMove: CascadeMove = async (scope, kind, id, request) => {
  const applied = await tryApply(scope, kind, id, request, {});
  if (applied) await applyCascades(scope, applied, {});
  return applied;
};

async function tryApply(scope: CommandScope, kind: EntityKind, id: string, request: TransitionRequest, notes: { cancellationNotes?: string }): Promise<Applied | null> {
  // A row this command read and has not moved since (the stop move's job or route) is not read again.
  const known = knownRow(scope, id);
  return known ? applyKnownIfAllowed(scope, kind, known, request, notes) : refusedAsNull(() => applyTransition(scope, kind, id, request, notes));
}

/** A move the workflow refuses (409 INVALID_TRANSITION, 422 REQUIREMENT_NOT_MET) as null: a rule that does not apply. */
async function refusedAsNull(move: () => Promise<Applied>): Promise<Applied | null> {
  try {
    return await move();
  } catch (error) {
    if (isRefusedMove(error)) return null;
    throw error;
  }
}
