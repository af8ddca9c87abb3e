import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import { detailOfRow, JOB_DETAIL_COLUMNS } from '../jobs/job-detail-row.ts';
import type { JobActor } from '../jobs/job-input.ts';
import type { JobData } from '../jobs/job-view.ts';
import type { WorkflowLookup } from '../runtime/answer-at-commit.ts';
import type { TenantRead } from '../runtime/tenant-read.ts';
import { assignJob, loadedFrom, type Assigned } from './assign-job.ts';
import { dispatchUpdate, insertDispatch, recordUpdatedDispatch, type DispatchRow, type UpdatedDispatchRow } from './dispatch-record.ts';
import { indexedDriverFacts } from './driver-index.ts';
import { assertDriverHasRoom } from './driver-load-check.ts';
import { assertDispatchableZone, loadJobTarget } from './job-target.ts';

/** The driver (the statement's parameter) is a worker of the team of the offer `record` (the dispatch table's name or alias). */
const teamMember = (record: string) => `exists (select 1 from worker w where w.site_id = ${record}.site_id and w.user_id = ? and w.team_ids @> jsonb_build_array(${record}.team_id))`;

/** What the pool holds and who may claim it: a team's drivers, or every driver of the site (no team). */
export type PoolOffer = { dispatch_id: string; job: JobData; posted_at: string; team_id: string | null };

/**
 * Offers one unassigned job in the pool: a pending `opt-in` dispatch with no driver. `postedAt` in the future hides
 * the offer until then (the deadline is the row's own data: the pool reads `posted_at <= now`).
 * @throws DomainError 409 JOB_NOT_UNASSIGNED, 422 ZONE_RESTRICTED, 404 team; UniqueConstraintViolationException when
 *   the job already has an active dispatch (the caller reports 409 ALREADY_DISPATCHED)
 */
export async function postToPool(scope: CommandScope, jobId: string, teamId: string | null, postedAt: Date): Promise<DispatchRow> {
  const job = await loadJobTarget(scope.em, scope.siteId, jobId);
  if (job.phase !== 'unassigned') throw new DomainError(409, 'JOB_NOT_UNASSIGNED', `Job ${job.id} is ${job.phase}; only unassigned jobs go to the pool`, 'job_ids');
  await assertDispatchableZone(scope.em, job);
  if (teamId) {
    const [team] = await scope.em.execute('select id from team where id = ? and site_id = ? and is_active', [teamId, scope.siteId]);
    if (!team) throw new DomainError(404, 'NOT_FOUND', `Team ${teamId} not found`, 'team_id');
  }
  return insertDispatch(scope, { job_id: job.id, team_id: teamId, method: 'opt-in', status: 'pending', posted_at: postedAt, dispatch_at: postedAt });
}

/**
 * The offers' filter: site-wide ones and the driver's (`?` after the site and the time) teams' ones, posted by now,
 * open, of a job still unassigned (a job cancelled meanwhile leaves the pool at once; the auto-dispatch pass then
 * completes its offer).
 */
const OPEN_OFFERS = `from dispatch d join job j on j.id = d.job_id and (j.site_id = d.site_id) is true and j.deleted_at is null and j.phase = 'unassigned'
  where d.site_id = ? and d.method = 'opt-in' and d.status = 'pending' and d.is_active and d.assigned_to_driver_id is null and d.posted_at <= ?
    and (d.team_id is null or ${teamMember('d')})`;

/**
 * The open offers of the site that the driver (the statement's third parameter) may claim now, in posting order
 * (`direction`), each with its job's detail columns and the count of every such offer: site-wide offers and their
 * teams' ones, posted by now, whose job is not deleted. The job is found by its key: `(j.site_id = d.site_id) is
 * true` keeps the site out of the join's index conditions. Planned on the statistics of a new site (a job or two),
 * `j.site_id = d.site_id` let the planner take `job_site_driver_idx` and filter every job of the site for each offer
 * (bench:dispatch: 32 ms for a page of 100 offers among 200 jobs, against 3 ms by `job_pkey`).
 */
export const poolOffers = (direction: 'asc' | 'desc') =>
  `select ${JOB_DETAIL_COLUMNS}, d.id as pool_dispatch_id, d.posted_at as pool_posted_at, d.team_id as pool_team_id, count(*) over () as pool_total
  ${OPEN_OFFERS} order by d.posted_at ${direction}, d.id ${direction} limit ? offset ?`;

/** A page of the pool: how many offers, from which, in which posting order (`asc`: oldest first). */
export type PoolPage = { limit: number; offset: number; direction: 'asc' | 'desc' };

/**
 * One page of the open offers this driver may claim now (site-wide ones and their teams' ones), oldest first unless
 * `direction` is `desc`, each job with its stops and their addresses as the driver sees them, and how many offers
 * there are in all. One statement (`read`: in one round trip, `tenantRead`; a page past the last offer costs a second,
 * for the count) and no entity hydration: drivers' apps poll this list, and the ORM's three reads of the jobs, their
 * stops and the stops' addresses cost most of its time.
 */
export async function listPool(read: TenantRead, workflows: WorkflowLookup, siteId: string, actor: JobActor, now: Date, page: PoolPage): Promise<[PoolOffer[], number]> {
  const rows = await read(poolOffers(page.direction), [siteId, now, actor.userId, page.limit, page.offset]);
  const offers: PoolOffer[] = [];
  for (const row of rows) {
    offers.push({
      dispatch_id: String(row.pool_dispatch_id),
      job: await detailOfRow(workflows, actor, row),
      posted_at: new Date(String(row.pool_posted_at)).toISOString(),
      team_id: (row.pool_team_id as string | null) ?? null,
    });
  }
  if (rows.length > 0) return [offers, Number(rows[0]!.pool_total)];
  if (page.offset === 0) return [[], 0];
  const [count] = await read(`select count(*) as total ${OPEN_OFFERS}`, [siteId, now, actor.userId]);
  return [[], Number(count?.total ?? 0)];
}

/**
 * A driver claims a pool offer. The race is decided by one conditional UPDATE (`... where assigned_to_driver_id is
 * null`): PostgreSQL makes concurrent claimers wait on the row, and once the first commits the others' condition no
 * longer holds, in any number of processes. The winner's job is dispatched in the same transaction (as the system,
 * on the driver's behalf); if that fails, the claim rolls back and the offer stays open. A claim is the driver's own
 * choice, so it counts as accepted.
 * @throws DomainError 404 (unknown, not yet posted, or another team's offer), 409 ALREADY_CLAIMED, 409 DRIVER_AT_CAPACITY, 409 NO_DEFAULT_VEHICLE
 */
export async function claimFromPool(scope: CommandScope, dispatchId: string): Promise<Assigned> {
  const driverId = scope.actor.userId;
  if (!driverId) throw new DomainError(403, 'DRIVER_REQUIRED', 'Only a driver can claim a pool job');
  const now = scope.clock.now();
  // The claim, under the offer's own conditions (posted, open to this driver), goes in one round trip with the read
  // of the drivers and the offer's job that its dispatch needs. The read comes first: the transaction has not written
  // yet, so the read may advance this process's shared driver index (a read after a write may not: driver-index.ts).
  const claim = dispatchUpdate(
    scope,
    dispatchId,
    { assigned_to_driver_id: driverId },
    `method = 'opt-in' and posted_at <= ? and (team_id is null or ${teamMember('dispatch')})
     and status = 'pending' and is_active and assigned_to_driver_id is null`,
    [now, driverId],
  );
  const indexed = await indexedDriverFacts(scope.em, scope.siteId, { offer: { offerId: dispatchId, after: claim } });
  const claimed = recordUpdatedDispatch(scope, 'claim', indexed.after?.[0] as UpdatedDispatchRow | undefined);
  // Only a refused claim reads the offer, to tell an offer this driver cannot see (404) from one already taken (409).
  if (!claimed) {
    const [offer] = await scope.em.execute(
      `select 1 from dispatch d where d.id = ? and d.site_id = ? and d.method = 'opt-in' and d.posted_at <= ? and (d.team_id is null or ${teamMember('d')})`,
      [dispatchId, scope.siteId, now, driverId],
    );
    if (!offer) throw new DomainError(404, 'NOT_FOUND', `Pool job ${dispatchId} not found`, 'dispatch_id');
    throw alreadyClaimed(dispatchId);
  }
  const loaded = loadedFrom(indexed, claimed.job_id!, driverId);
  // The office's limit on a driver's open jobs (`max_load`) holds for the jobs they take themselves too: a strategy
  // passes over such a driver (`capacity`). The claim's update is rolled back with the command.
  const driver = loaded.driver;
  if (driver) assertDriverHasRoom(driver, 'dispatch_id');
  // A claim goes out with the driver's default vehicle and takes no other: without an active one, say so (the
  // assignment's own VEHICLE_REQUIRED asks for a vehicle_id the claim cannot carry).
  if (driver && driver.active && driver.defaultVehicleId === null) {
    throw new DomainError(409, 'NO_DEFAULT_VEHICLE', `Driver ${driverId} has no active default vehicle: the office sets one on the worker before they claim`, 'dispatch_id');
  }
  // `assignJob` checks the zone only for what it reads itself; after its own first check (the phase), as it would.
  if (loaded.job.phase === 'unassigned') await assertDispatchableZone(scope.em, loaded.job);
  const system = { ...scope, actor: { ...scope.actor, role: 'system' as const } };
  return assignJob(system, {
    jobId: claimed.job_id!,
    driverId,
    teamId: claimed.team_id,
    method: 'opt-in',
    requireConfirmation: false,
    dispatchId,
    // The claim's row, locked by its UPDATE: the dispatch completes it in its own statement.
    pending: claimed,
    acceptedByDriver: true,
    loaded,
  });
}

export function alreadyClaimed(dispatchId: string): DomainError {
  return new DomainError(409, 'ALREADY_CLAIMED', `Pool job ${dispatchId} was already claimed by another driver`, 'dispatch_id');
}
