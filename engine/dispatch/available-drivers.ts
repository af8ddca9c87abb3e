import type { EntityManager } from '@mikro-orm/postgresql';
import type { MappingProvider } from '../mapping/mapping-provider.ts';
import type { OperationalStatus } from '../../persistence/entities/worker.entity.ts';
import { siteTimezone } from './decide.ts';
import { loadDriverFacts, type DriverFacts } from './driver-facts.ts';
import { exclusionReason, legsTo } from './evaluate.ts';
import { loadJobTarget } from './job-target.ts';

export type AvailableDriversQuery = {
  job_id: string;
  consider_schedule?: boolean;
  consider_conflicts?: boolean;
  exclude_unavailable?: boolean;
  has_vehicle?: boolean;
  operational_status?: OperationalStatus;
  search_query?: string;
};

/** The spec names two reasons; `capacity` and `not_available` (the driver actor is offline or on a break) are ours. */
export type UnavailableReason = 'inactive' | 'off_schedule' | 'has_conflict' | 'capacity' | 'not_available';

export type AvailableDriver = {
  driver: DriverFacts;
  available: boolean;
  unavailable_reason: UnavailableReason | null;
  eta_to_job: { duration_minutes: number; estimated_arrival: string; distance_meters: number } | null;
};

/**
 * The site's drivers for a job, each flagged: `available` when on schedule at the job's time (if
 * consider_schedule, default true), without an overlapping open job (if consider_conflicts, default true), under
 * their max load and with the driver actor `available`. Inactive workers (operational status, driver profile or
 * account) are never listed unless `operational_status` asks for them, and then as `inactive`. Sorted available first, then by ETA (no position
 * last), then by driver id.
 * @throws DomainError 404 when the job is not on this site
 */
export async function availableDrivers(em: EntityManager, siteId: string, query: AvailableDriversQuery, now: Date, mapping: MappingProvider): Promise<AvailableDriver[]> {
  const job = await loadJobTarget(em, siteId, query.job_id);
  const considerSchedule = query.consider_schedule ?? true;
  const considerConflicts = query.consider_conflicts ?? true;
  const [all, timezone] = [await loadDriverFacts(em, siteId, { withBusyWindows: considerConflicts && job.window !== null, excludeJobId: job.id }), await siteTimezone(em, siteId)];
  const needle = query.search_query?.trim().toLowerCase();
  const drivers = all.filter((d) => {
    if (query.operational_status ? d.operationalStatus !== query.operational_status : !d.active) return false;
    if (query.has_vehicle !== undefined && (d.defaultVehicleId !== null) !== query.has_vehicle) return false;
    return !needle || [d.name, d.email, d.firstName, d.lastName].some((v) => v?.toLowerCase().includes(needle));
  });
  const options = { at: new Date(job.window?.start ?? now.getTime()), timezone, job, considerSchedule, considerConflicts, requireAvailable: true };
  const legs = await legsTo(mapping, drivers, job.pickup);
  const entries = drivers.map((driver, i): AvailableDriver => {
    // An inactive driver is listed only when `operational_status` asks for them, and is not available: an assignment
    // would answer 409 DRIVER_NOT_ACTIVE.
    const reason = exclusionReason(driver, options) as UnavailableReason | null;
    const leg = legs[i];
    return {
      driver,
      available: reason === null,
      unavailable_reason: reason,
      eta_to_job: leg
        ? { duration_minutes: Math.round(leg.seconds / 6) / 10, estimated_arrival: new Date(now.getTime() + leg.seconds * 1000).toISOString(), distance_meters: Math.round(leg.meters) }
        : null,
    };
  });
  const eta = (e: AvailableDriver) => e.eta_to_job?.duration_minutes ?? Number.POSITIVE_INFINITY;
  return entries
    .filter((e) => e.available || !(query.exclude_unavailable ?? false))
    .sort((a, b) => Number(b.available) - Number(a.available) || eta(a) - eta(b) || (a.driver.userId < b.driver.userId ? -1 : 1));
}
