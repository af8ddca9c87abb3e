import { applyTransition, type CommandScope } from '../commands/apply-transition.ts';
import { applyCascades } from '../commands/cascade-rules.ts';
import { DomainError } from '../domain-error.ts';
import { detailFromRows, readJobDetail, STOPS_OF_JOB, type StopWithAddress } from './job-detail-row.ts';
import { stopFromRow, type EntityRow, type JobData, type StopRecord } from './job-view.ts';

type LoadedStop = EntityRow & { [JOB]: EntityRow; [STOPS]: StopWithAddress[] };

/**
 * Moves a stop of one of the calling driver's jobs; the job follows by the cascade rules (all stops done completes
 * it). Run it under the stop's mailbox key, as POST /stop/state does, so both paths queue behind each other.
 *
 * The stop, its job and the job's stops (what the answer shows) are read in one statement of the command's
 * transaction: checking ownership there (not before the command) means a job reassigned meanwhile cannot be moved by
 * its former driver, and another driver's stop is 404, as on every job read. When the move changed nothing but the
 * stop (arriving, or completing a stop that is not the last), the answer is built from those rows and the row the
 * move wrote; when the cascade moved the job (or more), the job is read again.
 * @returns the job as the driver sees it after the move
 * @throws DomainError 404, 400 UNKNOWN_STATE_ID, 409 INVALID_TRANSITION
 */
export async function moveDriverStop(scope: CommandScope, stopId: string, toStateId: string, notes: { cancellationNotes?: string } = {}): Promise<JobData> {
  const [row] = await scope.em.execute<LoadedStop[]>(
    `select s.*, to_jsonb(j) - 'snapshot' as ${JOB}, ${STOPS_OF_JOB} as ${STOPS}
     from stop s join job j on j.id = s.job_id and j.site_id = s.site_id and j.deleted_at is null
     where s.id = ? and s.site_id = ?`,
    [stopId, scope.siteId],
  );
  const owner = row?.[JOB].driver_user_id ?? null;
  if (!row || owner === null || owner !== scope.actor.userId) throw DomainError.notFound('Stop', stopId);
  const stop = stopFromRow(row);
  const applied = await applyTransition(scope, 'stop', stopId, { kind: 'move', toStateId }, notes, stop);
  await applyCascades(scope, applied, notes);
  const onlyThisStop = [...scope.touched.keys()].every((id) => id === stopId);
  return onlyThisStop
    ? detailFromRows(scope.em, scope.actor, row[JOB], row[STOPS], applied.entity as StopRecord)
    : readJobDetail(scope.em, scope.siteId, scope.actor, stop.jobId);
}

const JOB = 'job_row';
const STOPS = 'job_stops';
