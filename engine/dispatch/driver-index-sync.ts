import type { EntityManager } from '@mikro-orm/postgresql';
import { nameOnFile } from '../admin/user-name.ts';
import type { Availability } from '../../machines/driver-availability.machine.ts';
import type { WorkerScheduleData } from '../fleet/schedule.ts';
import { WORKER_FACT_COLUMNS, WORKER_FACT_JOINS, type DriverFacts } from './driver-facts.ts';
import { JOB_TARGET_SQL, type JobTargetRow } from './job-target.ts';
import { executePrepared, executePreparedThen, inlined, type RawStatement } from './prepared-statement.ts';

/** What rarely changes about a driver: cached per site, reloaded when the site's fleet version moves. */
export type SlowFacts = Omit<DriverFacts, 'availability' | 'position' | 'load' | 'busy'>;

/** A driver actor's row as the index keeps it: `[user_id, availability, last_lat, last_lng]`. */
export type StateChange = [userId: string, availability: Availability | null, lat: number | null, lng: number | null];
/** A job as the loads see it: `[job_id, driver_user_id when the job is open (assigned or in progress), else null]`. */
export type JobChange = [jobId: string, openDriverId: string | null];

/** One read of a site's head: its time zone, fleet version, and the fast facts changed since `since`. */
export type SiteHead = {
  timezone: string;
  /** `version:xmin` of the site's fleet version row (a rolled-back writer that reused a number has another xmin). */
  fleetKey: string;
  /** `pg_current_snapshot()` of the statement: what the next read starts from. */
  snapshot: string;
  /** The reading transaction's own id when it has written already: its rows are not committed (see driver-index.ts). */
  ownXid: string | null;
  /** Every driver actor of the site (since null), or the ones changed since. */
  states: StateChange[];
  /** Every open job (since null), or every job changed since (open or not). */
  jobs: JobChange[];
  /** The rows of the job asked for (none when it was not asked for, or is not on this site). */
  jobRows: JobTargetRow[];
  /** The site's current route workflow (a route a dispatch creates starts in it); null when the site has none. */
  routeWorkflowId: string | null;
  /** The rows of the statement sent after the read ({@link OfferRead}'s `after`); none without one. */
  after: Record<string, unknown>[];
};

/**
 * The job asked for as the job of a dispatch record (a pool offer), and a statement to run right after the read in
 * the same round trip (the claim's UPDATE): the read then runs before the transaction writes, so the shared driver
 * index may take its snapshot.
 */
export type OfferRead = { offerId: string; after?: RawStatement };

/**
 * Changed since the snapshot `$1` (a `pg_snapshot` as text). The upper bound is true of every row the statement can
 * see (committed before its snapshot, or written by its own transaction) and is there for the planner: the statements
 * run prepared, and a generic plan guesses that `change_xid >= <parameter>` keeps a third of a site's rows (a scan of
 * every job of the site per dispatch, growing all day), but that a range with both ends keeps 0.5% (the index).
 */
const changedSince = (alias: string) =>
  `${alias}.change_xid >= pg_snapshot_xmin($1::pg_snapshot)
    and ${alias}.change_xid <= greatest(pg_current_xact_id_if_assigned(), pg_snapshot_xmax(pg_current_snapshot()))
    and not pg_visible_in_snapshot(${alias}.change_xid, $1::pg_snapshot)`;

/**
 * The drivers changed since the snapshot `$1`: actors stamped with a newer `change_xid`, and drivers named by a newer
 * position log row (migration 0020). The actors' site condition names the "C" collation of `driver_state_change_xid_idx`
 * (migration 0032), as the changed jobs' does.
 */
const CHANGED_DRIVERS = `select c.user_id from driver_state c where c.site_id collate "C" = s.id and ${changedSince('c')}
  union select unnest(p.user_ids) from driver_position_change p where p.site_id = s.id and ${changedSince('p')}`;

/**
 * The changed drivers' actors, each looked up by its key. The `limit` keeps the lateral subquery from being pulled up
 * into a join the planner may turn around: as a filter on the site's actors (`d.user_id in (...)`), a generic plan
 * made while `driver_state` was tiny read every actor of the site on each dispatch.
 */
const CHANGED_STATES = `(${CHANGED_DRIVERS}) changed
  cross join lateral (select d.user_id, d.availability, d.last_lat, d.last_lng from driver_state d
    where d.site_id = s.id and d.user_id = changed.user_id limit 1) d`;

const OPEN_JOB = "j.phase in ('assigned', 'in_progress') and j.deleted_at is null";

/**
 * The changed jobs' site condition names the "C" collation, which only `job_change_xid_idx` has (migration 0032): a
 * generic plan made while `job` was tiny costs every `(site_id, ...)` index at one row, and took one that then
 * filtered every job of the site. The full read (a custom plan, open jobs) keeps the default for `job_open_driver_idx`.
 */
const CHANGED_JOB_SITE = 'j.site_id collate "C" = s.id';

/** The head statement: `$1` the snapshot (with `changes`), `$2` the site, `$3` the job (`job: 'id'`) or the dispatch record whose job it is (`'offer'`). */
function headSql(changes: boolean, job: 'id' | 'offer' | null): string {
  const states = changes ? CHANGED_STATES : 'driver_state d where d.site_id = s.id';
  const jobSite = changes ? CHANGED_JOB_SITE : 'j.site_id = s.id';
  const jobFilter = changes ? ` and ${changedSince('j')}` : ` and ${OPEN_JOB} and j.driver_user_id is not null`;
  const lost = changes ? 'exists (select 1 from driver_position_horizon h where h.site_id = s.id and h.pruned_through >= pg_snapshot_xmin($1::pg_snapshot))' : 'false';
  let next = 0;
  // The offer's site check is `is true` for the reason JOB_TARGET_SQL's is: a generic plan made while `dispatch` was
  // tiny took `dispatch_site_job_idx` and walked the site's records for the one id (head-read-plan.test.ts).
  const jobId = job === 'offer' ? '(select d.job_id from dispatch d where d.id = $3::text and (d.site_id = $2::text) is true)' : '$3::text';
  const jobTarget = JOB_TARGET_SQL.replace(/\?/g, () => ['$2::text', jobId, '$2::text'][next++]!);
  return `select s.timezone, v.version::text as version, v.xmin::text as row_xmin, pg_current_snapshot()::text as snapshot,
       pg_current_xact_id_if_assigned()::text as own_xid,
       (select w.id from workflow w where w.site_id = s.id and w.entity_type = 'route' and w.is_current) as route_workflow_id,
       (select coalesce(json_agg(json_build_array(d.user_id, d.availability, d.last_lat, d.last_lng)), '[]'::json)
          from ${states}) as states,
       ${lost} as positions_lost,
       (select coalesce(json_agg(json_build_array(j.id, case when ${OPEN_JOB} then j.driver_user_id end)), '[]'::json)
          from job j where ${jobSite}${jobFilter}) as jobs${job !== null ? `,
       (select coalesce(json_agg(t order by t.sort_order), '[]'::json) from (${jobTarget}) t) as job_rows` : ''}
     from site s left join dispatch_fleet_version v on v.site_id = s.id where s.id = $2::text`;
}

/**
 * The heads a decision reads once its process knows the site (changes since its last read, with or without a job, or
 * with a pool offer's job); the ones with a job are exported for their plan test.
 */
const CHANGES_HEAD = { name: 'dispatch_site_head_v3', sql: headSql(true, null) };
export const CHANGES_HEAD_WITH_JOB = { name: 'dispatch_site_head_job_v5', sql: headSql(true, 'id') };
export const CHANGES_HEAD_WITH_OFFER = { name: 'dispatch_site_head_offer_v2', sql: headSql(true, 'offer') };

type HeadRow = {
  timezone: string | null; version: string | null; row_xmin: string | null; snapshot: string; own_xid: string | null; route_workflow_id: string | null;
  states: StateChange[]; positions_lost: boolean; jobs: JobChange[]; job_rows?: JobTargetRow[];
};

/**
 * One statement: the site's time zone, fleet version and current route workflow, the statement's snapshot, and the
 * driver actors and jobs whose `change_xid` (migration 0019) `since` does not see, i.e. every change committed after
 * `since` was taken, in whatever order the writers committed. Positions are not stamped per row (migration 0020: that
 * made every fix a non-HOT update): the drivers named by the `driver_position_change` rows `since` does not see are
 * read too. When the location tracker has pruned log rows `since` may not have seen, a second statement reads every
 * driver actor. With `since` null: all of them (the first read of a process, sent unprepared). With `jobId`, the job
 * the decision is for too (`jobRows`, as {@link JOB_TARGET_SQL} reads it), in the same round trip; with `offer`, the
 * job of that dispatch record, and `offer.after` sent right after the read (`after`). The reads with a `since` run
 * as prepared statements (`executePrepared`): planning was most of their cost.
 */
export async function readSiteHead(em: EntityManager, siteId: string, since: string | null, jobId?: string, offer?: OfferRead): Promise<SiteHead> {
  const job = offer ? 'offer' : jobId === undefined ? null : 'id';
  const target = offer ? offer.offerId : jobId;
  let rows: HeadRow[];
  let after: Record<string, unknown>[] = [];
  if (since === null) {
    // The first read of a process is rare: `after` goes as a statement of its own.
    const { text, params } = inlined(headSql(false, job), [since, siteId, target]);
    rows = await em.execute<HeadRow[]>(text, params);
    if (offer?.after) after = await em.execute(offer.after.sql, offer.after.params);
  } else if (offer?.after) {
    [rows, after] = await executePreparedThen<HeadRow, Record<string, unknown>>(em, CHANGES_HEAD_WITH_OFFER, [since, siteId, target], offer.after);
  } else {
    const statement = job === null ? CHANGES_HEAD : job === 'id' ? CHANGES_HEAD_WITH_JOB : CHANGES_HEAD_WITH_OFFER;
    rows = await executePrepared<HeadRow>(em, statement, job === null ? [since, siteId] : [since, siteId, target]);
  }
  const row = rows[0];
  if (!row) throw new Error(`site ${siteId} is not visible in this transaction`);
  return {
    timezone: row.timezone || 'UTC',
    fleetKey: `${row.version ?? 0}:${row.row_xmin ?? ''}`,
    snapshot: row.snapshot,
    ownXid: row.own_xid,
    routeWorkflowId: row.route_workflow_id,
    states: row.positions_lost ? await readAllStates(em, siteId) : row.states,
    jobs: row.jobs,
    jobRows: row.job_rows ?? [],
    after,
  };
}

/**
 * Every driver actor of the site: for a reader whose snapshot is older than the position log's pruning (an idle
 * process). Read after the head, so possibly newer than its snapshot: the next read asks again for what changed
 * after that snapshot and gets the rows as they are then, so the index never goes back to an older value.
 */
async function readAllStates(em: EntityManager, siteId: string): Promise<StateChange[]> {
  const [row] = await em.execute<{ states: StateChange[] }[]>(
    `select coalesce(json_agg(json_build_array(d.user_id, d.availability, d.last_lat, d.last_lng)), '[]'::json) as states
     from driver_state d where d.site_id = ?`,
    [siteId],
  );
  return row?.states ?? [];
}

type SlowRow = {
  user_id: string; email: string; first_name: string | null; last_name: string | null; display_name: string | null;
  operational_status: string; profile_active: boolean; default_vehicle_id: string | null; vehicle_type: string | null;
  team_ids: string[]; zone_ids: string[]; max_load: number | null; weekly: WorkerScheduleData['weekly'] | null; exceptions: WorkerScheduleData['exceptions'] | null;
};

/** The same join and naming rules as `loadDriverFacts`, without the actor state and the loads; ordered by user id. */
export async function loadSlowFacts(em: EntityManager, siteId: string): Promise<SlowFacts[]> {
  const rows = await em.execute<SlowRow[]>(
    `select ${WORKER_FACT_COLUMNS} ${WORKER_FACT_JOINS} where w.site_id = ? order by w.user_id asc`,
    [siteId],
  );
  return rows.map((row) => ({
    userId: row.user_id,
    name: nameOnFile(row) ?? row.email,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    active: row.operational_status === 'active' && row.profile_active,
    operationalStatus: row.operational_status,
    defaultVehicleId: row.default_vehicle_id,
    vehicleType: row.vehicle_type,
    teamIds: row.team_ids,
    zoneIds: row.zone_ids,
    maxLoad: row.max_load,
    // A schedule row always has its exceptions (not null); its weekly may be null (no weekly restriction).
    schedule: row.exceptions ? { weekly: row.weekly, exceptions: row.exceptions } : null,
  }));
}
