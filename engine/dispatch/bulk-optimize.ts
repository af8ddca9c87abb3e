import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import type { CommandContext } from '../engine.ts';
import type { MappingProvider } from '../mapping/mapping-provider.ts';
import type { RoutingSolution } from '../optimization/routing-problem.ts';
import { solveInWorker } from '../optimization/worker-pool.ts';
import { loadRoute } from '../routes/route-membership.ts';
import { DEFAULT_STOP_SERVICE_SECONDS, type OptimizeStop } from '../routes/route-optimize-snapshot.ts';
import { writeRouteChange } from '../routes/route-records.ts';
import { assignJob } from './assign-job.ts';
import type { BulkResult, BulkRoute } from './bulk-distribute.ts';
import { fleetProblem, plannedStopIds, shiftOn, withMatrix, type FleetDriver, type FleetJob } from './bulk-optimize-problem.ts';
import { siteTimezone } from './decide.ts';
import type { DispatchDeps } from './dispatch-deps.ts';
import { exclude, noExcludedDrivers, type DispatchDecision, type ExcludedDrivers, type FailedJob } from './dispatch-types.ts';
import { loadDriverFacts, type DriverFacts } from './driver-facts.ts';
import { exclusionReason } from './evaluate.ts';
import { assertDispatchableZone, loadJobTarget, type JobTarget } from './job-target.ts';
import { inSavepoint } from './savepoint.ts';
import { assertNotHeld } from './scheduled-batch.ts';

export type OptimizeRequest = { jobIds: string[]; teamId: string; requireConfirmation: boolean; timeBudgetMs: number; dispatchIds?: Map<string, string> };
/** The site's mapping provider, read in the snapshot's transaction. */
export type ProviderFor = (em: EntityManager) => Promise<MappingProvider>;

const FAILURE_CODES = { capacity: 'CAPACITY_EXCEEDED', time_window: 'TIME_WINDOW_INFEASIBLE', fleet_exhausted: 'FLEET_EXHAUSTED' } as const;
const TIE_RULE = 'optimize_routes: jobs assigned and ordered by the route optimizer (least total duration; capacity, shifts, time windows)';

type Snapshot = { jobs: FleetJob[]; drivers: DriverFacts[]; fleet: FleetDriver[]; excluded: ExcludedDrivers; failed: FailedJob[]; provider: MappingProvider; now: Date };

/**
 * Bulk distribution with `optimize_routes`: the team's eligible drivers (active, available, with a default vehicle,
 * on schedule today) become the optimizer's vehicles (start at their last position, capacity in jobs from their
 * vehicle's `items` and their max_load, shift from today's schedule), the jobs its visits and shipments. Three
 * steps, so no transaction stays open while the optimizer runs: read (one short command), solve (a worker thread,
 * with the site's travel matrix, within the time budget), then write (one command: each job assigned in its
 * savepoint, each route's new stops appended in the planned order). Jobs the optimizer cannot place, or that
 * changed meanwhile, are in `failed_jobs` with the reason.
 */
export async function optimizedDistribute(deps: DispatchDeps, ctx: CommandContext, request: OptimizeRequest, providerFor?: ProviderFor): Promise<BulkResult> {
  const snapshot = await deps.engine.command(ctx, `team:${request.teamId}`, (scope) => readSnapshot(deps, scope, request, providerFor));
  const { jobs, fleet, now } = snapshot;
  if (jobs.length === 0) return { routes: [], failed_jobs: snapshot.failed, scheduled: false, dispatches: [] };
  if (fleet.length === 0) {
    const failed = jobs.map((j) => ({ job_id: j.jobId, code: 'NO_ELIGIBLE_DRIVER', error: `No driver of team ${request.teamId} can take jobs now` }));
    return { routes: [], failed_jobs: [...snapshot.failed, ...failed], scheduled: false, dispatches: [] };
  }
  const { problem, points } = fleetProblem(fleet, jobs, now.getTime());
  const matrix = await snapshot.provider.matrix(points, points, 'car');
  const solution = await solveInWorker(withMatrix(problem, matrix), { timeBudgetMs: request.timeBudgetMs, seed: 1 });
  return deps.engine.command(ctx, `team:${request.teamId}`, (scope) => applySolution(scope, request, snapshot, solution));
}

async function readSnapshot(deps: DispatchDeps, scope: CommandScope, request: OptimizeRequest, providerFor?: ProviderFor): Promise<Snapshot> {
  const now = scope.clock.now();
  const failed: FailedJob[] = [];
  const targets: JobTarget[] = [];
  for (const jobId of request.jobIds) {
    try {
      const target = await loadJobTarget(scope.em, scope.siteId, jobId);
      if (target.phase !== 'unassigned') throw new DomainError(409, 'JOB_NOT_UNASSIGNED', `Job ${jobId} is ${target.phase}; only unassigned jobs are dispatched`, 'job_id');
      if (target.points.length === 0) throw DomainError.unprocessable('NO_STOPS', `Job ${jobId} has no stop with a position`);
      await assertDispatchableZone(scope.em, target);
      await assertNotHeld(scope, jobId, request.dispatchIds?.get(jobId));
      targets.push(target);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      failed.push({ job_id: jobId, error: error.message, code: error.code });
    }
  }
  // One after the other: the statements share the command's connection.
  const drivers = await loadDriverFacts(scope.em, scope.siteId, { teamId: request.teamId });
  const timezone = await siteTimezone(scope.em, scope.siteId);
  const jobs = await loadStops(scope, targets.map((t) => t.id));
  const capacities = await vehicleItems(scope, drivers.flatMap((d) => (d.defaultVehicleId ? [d.defaultVehicleId] : [])));
  const fleet: FleetDriver[] = [];
  const excluded = noExcludedDrivers();
  for (const driver of drivers) {
    const options = { at: now, timezone, job: targets[0]!, considerSchedule: false, considerConflicts: false, requireAvailable: true, requireVehicle: true };
    const shift = shiftOn(driver.schedule, timezone, now);
    const reason = targets[0] ? exclusionReason(driver, options) : null;
    const offToday = shift !== null && shift.end <= now.getTime();
    if (reason || offToday) {
      exclude(excluded, driver, reason ?? 'off_schedule');
      continue;
    }
    const room = driver.maxLoad === null ? null : Math.max(0, driver.maxLoad - driver.load);
    const items = capacities.get(driver.defaultVehicleId!) ?? null;
    const capacity = room === null ? items : items === null ? room : Math.min(room, items);
    fleet.push({ userId: driver.userId, position: driver.position, capacity, shift });
  }
  const provider = providerFor ? await providerFor(scope.em) : deps.mappingFor(scope.siteId);
  return { jobs, drivers, fleet, excluded, failed, provider, now };
}

async function applySolution(scope: CommandScope, request: OptimizeRequest, snapshot: Snapshot, solution: RoutingSolution): Promise<BulkResult> {
  const failed = [...snapshot.failed];
  for (const left of solution.unassigned) {
    failed.push({ job_id: left.jobId.slice(2), code: FAILURE_CODES[left.reason], error: `The optimizer could not place it: ${left.detail}` });
  }
  const jobsById = new Map(snapshot.jobs.map((j) => [j.jobId, j]));
  const driverById = new Map(snapshot.drivers.map((d) => [d.userId, d]));
  const routes: BulkRoute[] = [];
  for (const planned of solution.routes) {
    const driver = driverById.get(planned.vehicleId)!;
    const stopOrder: string[] = [];
    const dispatched: string[] = [];
    let routeId: string | null = null;
    for (const stop of planned.stops) {
      const jobId = stop.jobId.slice(2);
      const job = jobsById.get(jobId)!;
      if (stop.kind !== 'dropoff' && driver.maxLoad !== null && driver.load + dispatched.length >= driver.maxLoad) {
        // max_load counts open jobs; the optimizer saw it only as room on board, so short shipments in a row may pass it.
        failed.push({ job_id: jobId, code: 'CAPACITY_EXCEEDED', error: `Driver ${driver.userId} would pass their max_load of ${driver.maxLoad} open jobs` });
        jobsById.delete(jobId);
        continue;
      }
      if (stop.kind !== 'dropoff') {
        const decision = decisionFor(snapshot, driver, stop.arrival, driver.load + dispatched.length);
        const result = await inSavepoint(scope, () =>
          assignJob(scope, {
            jobId, driverId: driver.userId, teamId: request.teamId, method: 'team', requireConfirmation: request.requireConfirmation, decision, dispatchId: request.dispatchIds?.get(jobId),
          }),
        );
        if (!result.ok) {
          failed.push({ job_id: jobId, error: result.error.message, code: result.error.code });
          jobsById.delete(jobId);
          continue;
        }
        routeId = result.value.route.id;
        dispatched.push(jobId);
      }
      if (jobsById.has(jobId)) stopOrder.push(...plannedStopIds(job, stop.kind));
    }
    if (!routeId) continue;
    await appendInOrder(scope, routeId, stopOrder);
    routes.push({ route_id: routeId, driver_id: driver.userId, driver_name: driver.name, optimized: true, dispatched_job_ids: dispatched });
  }
  return { routes, failed_jobs: failed, scheduled: false, dispatches: [] };
}

/** Why this driver: the optimizer's plan put the job on their route (ETA: the planned arrival at its first stop). */
function decisionFor(snapshot: Snapshot, driver: DriverFacts, arrivalSeconds: number, load: number): DispatchDecision {
  return {
    strategy: 'load-balanced',
    tie_rule: TIE_RULE,
    decided_at: snapshot.now.toISOString(),
    considered: snapshot.drivers.length,
    eligible: snapshot.fleet.length,
    candidates: [{ driver_id: driver.userId, driver_name: driver.name, eta_minutes: Math.round(arrivalSeconds / 6) / 10, distance_meters: null, load, rank: 1 }],
    // The same list and counts for every job of the batch (decisions are written, never changed).
    exclusions: snapshot.excluded.listed,
    excluded_by_reason: snapshot.excluded.byReason,
    winner: { driver_id: driver.userId, driver_name: driver.name },
  };
}

/** The route's other stops keep their order at the front; the batch's stops follow in the planned order. */
async function appendInOrder(scope: CommandScope, routeId: string, planned: string[]): Promise<void> {
  const rows = await scope.em.execute<{ stop_id: string }[]>('select stop_id from route_stop where route_id = ? and site_id = ? order by position', [routeId, scope.siteId]);
  const batch = new Set(planned);
  const order = [...rows.map((r) => r.stop_id).filter((id) => !batch.has(id)), ...planned.filter((id) => rows.some((r) => r.stop_id === id))];
  for (const [index, stopId] of order.entries()) {
    await scope.em.execute('update route_stop set position = ? where route_id = ? and stop_id = ? and site_id = ?', [index + 1, routeId, stopId, scope.siteId]);
  }
  await writeRouteChange(scope, await loadRoute(scope, routeId), {}, 'optimize', { after: { stop_ids: order, method: 'optimizer' } });
}

type StopRow = { id: string; job_id: string; type: string; lat: number; lng: number; complete_after: Date | null; complete_before: Date | null; default_duration_seconds: number | null };

/** Each job's stops with positions, windows and service times; pickups first, then the rest in their order. */
async function loadStops(scope: CommandScope, jobIds: string[]): Promise<FleetJob[]> {
  if (jobIds.length === 0) return [];
  const rows = await scope.em.execute<StopRow[]>(
    `select s.id, s.job_id, s.type, a.lat, a.lng, s.complete_after, s.complete_before, st.default_duration_seconds
     from job j join stop s on s.job_id = j.id and s.site_id = j.site_id join address a on a.id = s.address_id
     left join service_type st on st.id = j.service_type_id and st.site_id = j.site_id
     where j.id in (?) and j.site_id = ? order by s.sort_order`,
    [jobIds, scope.siteId],
  );
  return jobIds.map((jobId) => {
    const stops = rows.filter((r) => r.job_id === jobId).map(
      (r): OptimizeStop => ({
        id: r.id, job_id: r.job_id, type: r.type, closed: false, point: { lat: Number(r.lat), lng: Number(r.lng) },
        serviceSeconds: r.default_duration_seconds ?? DEFAULT_STOP_SERVICE_SECONDS, completeAfter: epoch(r.complete_after), completeBefore: epoch(r.complete_before),
      }),
    );
    return { jobId, stops: [...stops.filter((s) => s.type === 'pickup'), ...stops.filter((s) => s.type !== 'pickup')] };
  });
}

const epoch = (value: Date | null) => (value === null ? null : new Date(value).getTime());

/** Per vehicle, its `capacity.items` when set (the only dimension jobs are counted in). */
async function vehicleItems(scope: CommandScope, vehicleIds: string[]): Promise<Map<string, number>> {
  if (vehicleIds.length === 0) return new Map();
  const rows = await scope.em.execute<{ id: string; capacity: { items?: number } | null }[]>('select id, capacity from vehicle where id in (?) and site_id = ?', [vehicleIds, scope.siteId]);
  return new Map(rows.flatMap((r) => (typeof r.capacity?.items === 'number' ? [[r.id, r.capacity.items] as const] : [])));
}
