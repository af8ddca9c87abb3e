import { STOPS_OF_JOB, type StopWithAddress } from '../jobs/job-detail-row.ts';
import type { EntityRow, JobRecord } from '../jobs/job-view.ts';
import type { Applied, CommandScope, EntityKind, EntityRecord } from './apply-transition.ts';

/**
 * What a stop's move and its cascades read, in one statement: the stop (`select *`, locked `for update`), its job
 * (`to_jsonb`, snapshot included), the job's stops with their addresses (their phases decide whether the job is done;
 * the rows are also the answer's), the job's route (`to_jsonb`), the phase of each job on that route (whether the
 * route is done), and whether the job's dispatch waits for its driver's confirmation (whether starting the job
 * records the acceptance: `recordAcceptanceOfDriverMove`).
 */
export type StopMoveReads = EntityRow & {
  [JOB]: EntityRow;
  [STOPS]: StopWithAddress[];
  [ROUTE]: EntityRow | null;
  [ROUTE_JOBS]: { id: string; phase: string }[];
  [AWAITS_CONFIRMATION]: boolean;
};

/**
 * Reads what moving stop `stopId` needs (see {@link StopMoveReads}); undefined when the stop is not the site's or its
 * job is deleted. The stop is locked until the command ends (`for update of s`: the lock its own update would take,
 * only taken sooner), so the move's write cannot miss and may go out later (`applyKnown`). Since nothing else in the
 * transaction writes the job, its stops or its route before the cascades look at them, the cascades decide from
 * these rows (`knownStopPhases`, `knownRow`, `knownRoute`) instead of reading them again.
 */
export async function readStopMove(scope: CommandScope, stopId: string): Promise<StopMoveReads | undefined> {
  // The dispatch lookup only for a job still assigned: only a move that starts it can be its driver's acceptance, so
  // the usual moves (arrive, complete, on a job under way) skip it.
  const [row] = await scope.em.execute<StopMoveReads[]>(
    `select s.*, to_jsonb(j) as ${JOB}, ${STOPS_OF_JOB} as ${STOPS},
       (select to_jsonb(r) from route r where r.id = j.route_id and r.site_id = j.site_id) as ${ROUTE},
       (select coalesce(json_agg(json_build_object('id', rj.id, 'phase', rj.phase)), '[]'::json) from job rj
         where rj.route_id = j.route_id and rj.site_id = j.site_id and rj.deleted_at is null) as ${ROUTE_JOBS},
       j.phase = 'assigned' and exists (select 1 from dispatch d where d.job_id = j.id and d.site_id = j.site_id
         and d.assigned_to_driver_id = j.driver_user_id and d.status = 'pending' and d.is_active and d.require_confirmation
         and not d.driver_accepted and d.dispatched_at is not null) as ${AWAITS_CONFIRMATION}
     from stop s join job j on j.id = s.job_id and j.site_id = s.site_id and j.deleted_at is null
     where s.id = ? and s.site_id = ?
     for update of s`,
    [stopId, scope.siteId],
  );
  if (row) knownReads.set(scope.touched, row);
  return row;
}

/**
 * The phases of the job's stops once `applied` (a move of the stop read) is made, or undefined when the reads no
 * longer tell them (another stop of the job moved in this command, or this command did not read them).
 */
export function knownStopPhases(scope: CommandScope, applied: Applied): string[] | undefined {
  const reads = knownReads.get(scope.touched);
  if (!reads || reads.id !== applied.entity.id) return undefined;
  const stops = reads[STOPS].map(({ stop }) => String(stop.id));
  if (stops.some((id) => id !== applied.entity.id && scope.touched.has(id))) return undefined;
  return reads[STOPS].map(({ stop }) => (stop.id === applied.entity.id ? applied.to.phase : String(stop.phase)));
}

/**
 * A row as read, while this command has not moved it since: the read job or route of the stop move being made; or
 * the job as this command's last move of it built it from such a row (`noteBuiltJob`), its update still queued.
 */
export function knownRow(scope: CommandScope, id: string): EntityRow | undefined {
  const reads = knownReads.get(scope.touched);
  if (!reads) return undefined;
  if (reads[JOB].id === id) return scope.touched.has(id) ? builtJobs.get(reads) : reads[JOB];
  return reads[ROUTE]?.id === id && !scope.touched.has(id) ? reads[ROUTE] : undefined;
}

/** Whether the stop move's job `jobId` had a dispatch waiting for its driver's confirmation when read; undefined when not read. */
export function knownAwaitingConfirmation(scope: CommandScope, jobId: string): boolean | undefined {
  const reads = knownReads.get(scope.touched);
  return reads && reads[JOB].id === jobId ? reads[AWAITS_CONFIRMATION] : undefined;
}

/** Keeps the stop move's job as a queued move built it from the known row (the row `returning *` would give). */
export function noteBuiltJob(scope: CommandScope, row: EntityRow): void {
  const reads = knownReads.get(scope.touched);
  if (reads && reads[JOB].id === row.id) builtJobs.set(reads, row);
}

/**
 * The route `routeId` and the phases of its jobs once `applied` (a move of the read job) is made, or undefined when
 * the reads no longer tell them (the route or another of its jobs moved in this command, or it was not read).
 */
export function knownRoute(scope: CommandScope, applied: Applied, routeId: string): { route: EntityRow; phases: string[] } | undefined {
  const reads = knownReads.get(scope.touched);
  const route = knownRow(scope, routeId);
  if (!reads || !route || reads[JOB].id !== applied.entity.id) return undefined;
  const jobs = reads[ROUTE_JOBS];
  if (!jobs.some((job) => job.id === applied.entity.id) || jobs.some((job) => job.id !== applied.entity.id && scope.touched.has(job.id))) return undefined;
  return { route, phases: jobs.map((job) => (job.id === applied.entity.id ? applied.to.phase : job.phase)) };
}

/** Keeps the job of the stop move being made as a move of this command wrote it (`writtenJob`). */
export function noteWritten(scope: CommandScope, kind: EntityKind, entity: EntityRecord): void {
  const reads = knownReads.get(scope.touched);
  if (!reads || kind !== 'job' || reads[JOB].id !== entity.id) return;
  writtenJobs.set(reads, entity as JobRecord);
  // Until `noteBuiltJob` says this write was built from the known row, the row written is not known.
  builtJobs.delete(reads);
}

/** The stop move's job as this command last wrote it; undefined when it did not move. */
export const writtenJob = (scope: CommandScope): JobRecord | undefined => {
  const reads = knownReads.get(scope.touched);
  return reads && writtenJobs.get(reads);
};

const writtenJobs = new WeakMap<StopMoveReads, JobRecord>();
const builtJobs = new WeakMap<StopMoveReads, EntityRow>();
const knownReads = new WeakMap<CommandScope['touched'], StopMoveReads>();

export const JOB = 'move_job';
export const STOPS = 'move_job_stops';
export const ROUTE = 'move_route';
export const ROUTE_JOBS = 'move_route_jobs';
export const AWAITS_CONFIRMATION = 'move_job_awaits_confirmation';
