import type { EntityManager } from '@mikro-orm/postgresql';
import { BANNED_ZONES_JSON, bannedZoneHitsIn, type BannedZone, type BannedZoneHit } from '../fleet/zone-rules.ts';
import type { LatLng } from '../mapping/mapping-provider.ts';
import { DomainError } from '../domain-error.ts';
import type { EntityRow } from '../jobs/job-view.ts';

/** A time span in epoch milliseconds. */
export type Window = { start: number; end: number };

/** What dispatch needs to know about a job: where it starts, when it happens, and its state. */
export type JobTarget = {
  id: string;
  phase: string;
  version: number;
  driverUserId: string | null;
  routeId: string | null;
  zoneOverride: boolean;
  /** The first stop's position (where a driver must go first). */
  pickup: LatLng | null;
  points: { index: number; lat: number; lng: number }[];
  /** From the stops' complete_after / complete_before; null when no stop has a time window. */
  window: Window | null;
  /** Earliest complete_before of any stop: the job's urgency (priority strategy); null when none. */
  deadline: number | null;
  createdAt: number;
  /** The site's active banned zones, read with the job (the dispatch-time zone rule needs no query of its own). */
  bannedZones: BannedZone[];
  /** The job's active dispatch records (a pool offer, a scheduled or earlier dispatch): a new one supersedes them. */
  activeDispatches: number;
  /** Where the job and its stops are in their workflows (as read from the database): a dispatch plans its moves from it. */
  states?: JobStates;
  /** The job's and its stops' whole rows (`select *` as JSON, stops in stop order): a dispatch planned from memory predicts its rows from them. */
  rows?: { job: EntityRow; stops: EntityRow[] };
};

/** A job's workflow and state key, and its stops' (in stop order). */
export type JobStates = { workflowId: string; state: string; stops: StopState[] };
/** A stop's workflow position as read with its job. */
export type StopState = { id: string; phase: string; version: number; workflowId: string; state: string };

/** A row of {@link JOB_TARGET_SQL}: the job with one of its stops (dates as `Date`, or ISO text when read as JSON). */
export type JobTargetRow = {
  id: string; phase: string; version: number; banned_zones: BannedZone[]; active_dispatches: number | string; driver_user_id: string | null; route_id: string | null; zone_override: boolean;
  created_at: Date | string; sort_order: number | null; lat: number | null; lng: number | null; complete_after: Date | string | null; complete_before: Date | string | null;
  workflow_id: string; state: string; stop_id: string | null; stop_phase: string | null; stop_version: number | null; stop_workflow_id: string | null; stop_state: string | null;
  job_row: EntityRow; stop_row: EntityRow | null;
};

/**
 * A job of the site (not deleted), one row per stop in stop order, with the site's active banned zones and whether
 * how many active dispatch records the job has. Parameters: site id, job id, site id.
 * The site check on the job is `is true`, a filter that no index can serve: the head read runs this as a generic
 * plan, which estimates one row for `site_id = $n` on fresh statistics and then picked the smallest index that leads
 * with `site_id` (walking every job of the site, ~1 buffer per job) over the primary key.
 */
export const JOB_TARGET_SQL = `select j.id, j.phase, j.version, j.driver_user_id, j.route_id, j.zone_override, j.created_at, s.sort_order, a.lat, a.lng,
       s.complete_after, s.complete_before, j.workflow_id, j.snapshot->>'value' as state,
       s.id as stop_id, s.phase as stop_phase, s.version as stop_version, s.workflow_id as stop_workflow_id, s.snapshot->>'value' as stop_state,
       to_jsonb(j) as job_row, to_jsonb(s) as stop_row,
       ${BANNED_ZONES_JSON} as banned_zones,
       (select count(*)::int from dispatch d where d.site_id = j.site_id and d.job_id = j.id and d.is_active and d.status <> 'completed') as active_dispatches
     from job j left join stop s on s.job_id = j.id and s.site_id = j.site_id left join address a on a.id = s.address_id
     where j.id = ? and (j.site_id = ?) is true and j.deleted_at is null order by s.sort_order asc, s.id asc`;

/**
 * Reads a job of the site (not deleted) with its stops' positions and time windows.
 * @throws DomainError 404 when the job does not exist on this site
 */
export async function loadJobTarget(em: EntityManager, siteId: string, jobId: string): Promise<JobTarget> {
  return toJobTarget(await em.execute<JobTargetRow[]>(JOB_TARGET_SQL, [siteId, jobId, siteId]), jobId);
}

/**
 * The job target from its rows (in stop order).
 * @throws DomainError 404 when there are none
 */
export function toJobTarget(rows: JobTargetRow[], jobId: string): JobTarget {
  const first = rows[0];
  if (!first) throw DomainError.notFound('Job', jobId);
  const points = rows.flatMap((r, index) => (r.lat === null || r.lng === null ? [] : [{ index, lat: Number(r.lat), lng: Number(r.lng) }]));
  return {
    id: first.id,
    phase: first.phase,
    version: Number(first.version),
    driverUserId: first.driver_user_id,
    routeId: first.route_id,
    zoneOverride: first.zone_override,
    pickup: points[0] ? { lat: points[0].lat, lng: points[0].lng } : null,
    points,
    window: windowOf(rows.map((r) => ({ after: r.complete_after, before: r.complete_before }))),
    deadline: min(rows.map((r) => r.complete_before)),
    createdAt: new Date(first.created_at).getTime(),
    bannedZones: first.banned_zones,
    activeDispatches: Number(first.active_dispatches),
    states: {
      workflowId: first.workflow_id,
      state: first.state,
      stops: rows.flatMap((r) =>
        r.stop_id === null ? [] : [{ id: r.stop_id, phase: r.stop_phase!, version: Number(r.stop_version), workflowId: r.stop_workflow_id!, state: r.stop_state! }],
      ),
    },
    rows: { job: first.job_row, stops: rows.flatMap((r) => (r.stop_row ? [r.stop_row] : [])) },
  };
}

/** The span from the earliest bound to the latest over the stops' windows; null when no stop has one. */
export function windowOf(bounds: { after: Date | string | null; before: Date | string | null }[]): Window | null {
  const afters = min(bounds.map((b) => b.after));
  const befores = max(bounds.map((b) => b.before));
  const start = afters ?? min(bounds.map((b) => b.before));
  const end = befores ?? max(bounds.map((b) => b.after));
  return start === null || end === null ? null : { start, end };
}

/** Two windows overlap when they share more than an instant (back-to-back jobs do not conflict). */
export function overlaps(a: Window, b: Window): boolean {
  if (a.start === a.end || b.start === b.end) return a.start <= b.end && b.start <= a.end;
  return a.start < b.end && b.start < a.end;
}

/**
 * The banned-zone rule at dispatch time: a job with a stop in an active banned zone is not dispatched unless
 * staff overrode the restriction when the job was created (the override is stored on the job).
 * @throws DomainError 422 ZONE_RESTRICTED naming the stop and the zone
 */
export async function assertDispatchableZone(_em: EntityManager, job: JobTarget): Promise<BannedZoneHit[]> {
  const hits = bannedZoneHitsIn(job.bannedZones, job.points);
  if (hits.length === 0 || job.zoneOverride) return hits;
  const hit = hits[0]!;
  throw new DomainError(422, 'ZONE_RESTRICTED', `Job ${job.id}: stop ${hit.stopIndex} is inside the banned zone ${hit.zoneName} (${hit.zoneId})`, 'job_id', {
    hits: hits.map((h) => ({ stop_index: h.stopIndex, zone_id: h.zoneId, zone_name: h.zoneName })),
  });
}

function min(values: (Date | string | null)[]): number | null {
  const times = values.filter((v): v is Date | string => v !== null).map((v) => new Date(v).getTime());
  return times.length ? Math.min(...times) : null;
}

function max(values: (Date | string | null)[]): number | null {
  const times = values.filter((v): v is Date | string => v !== null).map((v) => new Date(v).getTime());
  return times.length ? Math.max(...times) : null;
}
