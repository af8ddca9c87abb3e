import type { EntityManager } from '@mikro-orm/postgresql';
import { siteTimezone } from '../dispatch/decide.ts';
import { loadDriverFacts, type DriverFacts } from '../dispatch/driver-facts.ts';
import { exclusionReason, legsTo } from '../dispatch/evaluate.ts';
import { loadJobTarget } from '../dispatch/job-target.ts';
import { rankDrivers } from '../dispatch/select-driver.ts';
import { findVisibleJob } from '../jobs/job-detail.ts';
import { isStaff, type JobActor } from '../jobs/job-input.ts';
import { transportModeFor, type MappingProvider } from '../mapping/mapping-provider.ts';
import { loadEtaDriver } from './eta-driver.ts';
import { driverItinerary, jobItinerary, type ItineraryStop } from './eta-itinerary.ts';
import { estimateStops, type StopEstimate } from './stop-eta.ts';

/** The spec's Stop ETA; the times and figures are null while no driver position is known. */
export type StopEta = {
  stop_id: string;
  stop_index: number;
  type: string;
  estimated_arrival_at: string | null;
  estimated_completion_at: string | null;
  cumulative_distance_meters: number | null;
  cumulative_duration_seconds: number | null;
};

/** The spec's Stop ETA result, plus the job, the driver the stops are measured from, and when it was computed. */
export type StopEtaResult = {
  job_id: string;
  driver_id: string | null;
  computed_at: string;
  best_driver_id: string | null;
  eligible_driver_count: number;
  located_driver_count: number;
  pickup_duration_seconds: number | null;
  pickup_eta: string | null;
  stops: StopEta[];
};

const OPEN_JOB_PHASES = new Set(['assigned', 'in_progress']);

/**
 * The ETAs of a job's remaining stops, computed now through the site's mapping provider.
 * - Assigned or in progress: from the assigned driver's last known position along their whole itinerary (stops of
 *   their earlier jobs on the route come first), so a job later in the day gets a later ETA. The "best driver" is
 *   the assigned one (eligible 1, located 1 or 0); the pickup figures are those of the job's first remaining stop.
 * - Unassigned: the best driver is the fastest of the eligible drivers (dispatch's own rule: active, on schedule,
 *   no conflicting job, under max load, `available`) that have a position, measured to the first remaining stop;
 *   the stops are measured from that driver. Customers are not told which driver that is (best_driver_id null).
 * - Completed or cancelled: nothing remains (no stops, no driver).
 * @throws DomainError 404 when the job is not visible to the actor (another site's, another customer's, a job not
 *   assigned to the calling driver)
 */
export async function jobEta(em: EntityManager, siteId: string, actor: JobActor, jobId: string, mapping: MappingProvider, now: Date): Promise<StopEtaResult> {
  const job = await findVisibleJob(em, actor, jobId);
  const base = { job_id: job.id, computed_at: now.toISOString() };
  if (job.driverUserId && OPEN_JOB_PHASES.has(job.phase)) {
    const driver = await loadEtaDriver(em, siteId, job.driverUserId);
    const itinerary = await driverItinerary(em, siteId, job.driverUserId);
    const estimates = driver?.position ? await estimateStops(mapping, driver.position, driver.mode, itinerary, now) : [];
    const stops = itinerary.filter((s) => s.jobId === job.id).map((s) => toStopEta(s, estimates.find((e) => e.stop.stopId === s.stopId)));
    const first = stops[0]?.cumulative_duration_seconds ?? null;
    return {
      ...base,
      driver_id: job.driverUserId,
      best_driver_id: job.driverUserId,
      eligible_driver_count: 1,
      located_driver_count: driver?.position ? 1 : 0,
      pickup_duration_seconds: first,
      pickup_eta: stops[0]?.estimated_arrival_at ?? null,
      stops,
    };
  }
  if (job.phase !== 'unassigned') {
    return { ...base, driver_id: null, best_driver_id: null, eligible_driver_count: 0, located_driver_count: 0, pickup_duration_seconds: null, pickup_eta: null, stops: [] };
  }
  const itinerary = await jobItinerary(em, siteId, job.id);
  const { best, eligible, located } = await bestDriver(em, siteId, job.id, itinerary[0] ?? null, mapping, now);
  const estimates = best ? await estimateStops(mapping, best.facts.position!, modeOf(best.facts), itinerary, now) : [];
  const stops = itinerary.map((s) => toStopEta(s, estimates.find((e) => e.stop.stopId === s.stopId)));
  // The pickup figures are the first stop's, as for an assigned job: they wait for its window as the stops do.
  const pickup = best ? stops[0] : undefined;
  return {
    ...base,
    driver_id: best && isStaff(actor.role) ? best.facts.userId : null,
    best_driver_id: best && isStaff(actor.role) ? best.facts.userId : null,
    eligible_driver_count: eligible,
    located_driver_count: located,
    pickup_duration_seconds: pickup?.cumulative_duration_seconds ?? null,
    pickup_eta: pickup?.estimated_arrival_at ?? null,
    stops,
  };
}

/**
 * The fastest eligible driver with a known position to `pickup`, through dispatch's eligibility rule and its
 * `eta` ranking (travel time, then load, then driver id), so this agrees with what auto dispatch would choose.
 */
async function bestDriver(em: EntityManager, siteId: string, jobId: string, pickup: ItineraryStop | null, mapping: MappingProvider, now: Date) {
  const target = await loadJobTarget(em, siteId, jobId);
  const [drivers, timezone] = [await loadDriverFacts(em, siteId, { withBusyWindows: target.window !== null, excludeJobId: jobId }), await siteTimezone(em, siteId)];
  const options = { at: new Date(target.window?.start ?? now.getTime()), timezone, job: target, considerSchedule: true, considerConflicts: true, requireAvailable: true };
  const eligible = drivers.filter((d) => exclusionReason(d, options) === null);
  const located = eligible.filter((d) => d.position !== null).length;
  const legs = await legsTo(mapping, eligible, pickup ? { lat: pickup.lat, lng: pickup.lng } : null);
  const [winner] = rankDrivers('eta', eligible.map((facts, i) => ({ facts, leg: legs[i] ?? null })), null);
  const best = winner?.leg ? { facts: winner.facts, seconds: Math.round(winner.leg.seconds) } : null;
  return { best, eligible: eligible.length, located };
}

function modeOf(driver: DriverFacts) {
  return transportModeFor(driver.vehicleType ?? 'car');
}

function toStopEta(stop: ItineraryStop, estimate: StopEstimate | undefined): StopEta {
  return {
    stop_id: stop.stopId,
    stop_index: stop.stopIndex,
    type: stop.type,
    estimated_arrival_at: estimate?.arrivalAt.toISOString() ?? null,
    estimated_completion_at: estimate?.completionAt.toISOString() ?? null,
    cumulative_distance_meters: estimate?.cumulativeDistanceMeters ?? null,
    cumulative_duration_seconds: estimate?.cumulativeDurationSeconds ?? null,
  };
}
