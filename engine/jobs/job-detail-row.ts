import { DomainError } from '../domain-error.ts';
import { AnswerAtCommit, type WorkflowLookup } from '../runtime/answer-at-commit.ts';
import type { TenantRead } from '../runtime/tenant-read.ts';
import { isStaff, type JobActor } from './job-input.ts';
import { jobFromRow, stopFromRow, toJobData, toStopData, type AddressFields, type EntityRow, type JobData, type JobRecord, type StopData, type StopRecord } from './job-view.ts';

/** A stop row and its address row, as JSON: what {@link STOPS_OF_JOB} gives per stop. */
export type StopWithAddress = { stop: EntityRow; address: EntityRow | null };

/**
 * SQL for the stops of the job aliased `j`, in order, each with its address (`StopWithAddress[]` as JSON): the rows
 * the detail view shows, read in the same statement as the job.
 */
export const STOPS_OF_JOB = `(select coalesce(json_agg(json_build_object('stop', to_jsonb(s) - 'snapshot', 'address', to_jsonb(a) - 'types') order by s.sort_order), '[]'::json)
  from stop s left join address a on a.id = s.address_id and (a.site_id = s.site_id or a.site_id is null)
  where s.job_id = j.id and s.site_id = j.site_id)`;

const STOPS = 'detail_stops';
const ROUTE = 'detail_route';

/** The stops column of {@link JOB_DETAIL_COLUMNS} alone, for a read that selects the job's row itself. */
export const STOPS_COLUMN = `${STOPS_OF_JOB} as ${STOPS}`;
/** A job's detail columns, the job aliased `j`: its row and its stops with their addresses, as {@link detailOfRow} reads them. */
export const JOB_DETAIL_COLUMNS = `j.*, ${STOPS_COLUMN}`;

/**
 * A command's answer with the job as the command left it, as `actor` sees it: the job, its stops (in order) and their
 * addresses in one statement that goes out with the COMMIT (no round trip of its own, no entity hydration), the same
 * view `jobDetail` builds from three ORM queries. The command has established that the actor may act on the job, so
 * it is read whoever they are (a job a driver just gave back is no longer theirs to read, yet they are answered with it).
 */
export function jobDetailAtCommit(siteId: string, actor: JobActor, jobId: string): AnswerAtCommit<JobData> {
  return new AnswerAtCommit(detailSql(''), [jobId, siteId], async (rows, workflows) => (await detailAndRoute(rows, actor, jobId, workflows)).job);
}

/**
 * {@link jobDetailAtCommit}, and in the same row a route of the site as its row (JSON), or null: a dispatch answers
 * with both (the route's row read as JSON gives the same record: its timestamps are written in milliseconds).
 */
export function jobDetailAndRouteAtCommit(siteId: string, actor: JobActor, jobId: string, routeId: string): AnswerAtCommit<{ job: JobData; route: EntityRow | null }> {
  const route = `, (select to_jsonb(r) from route r where r.id = ? and r.site_id = ?) as ${ROUTE}`;
  return new AnswerAtCommit(detailSql(route), [routeId, siteId, jobId, siteId], (rows, workflows) => detailAndRoute(rows, actor, jobId, workflows));
}

const detailSql = (extraColumns: string) => `select ${JOB_DETAIL_COLUMNS}${extraColumns} from job j where j.id = ? and j.site_id = ? and j.deleted_at is null`;

/**
 * A job's detail as `actor` may see it (`visibleJobs`' rule: staff every job of the site, a driver the jobs assigned
 * to them, a customer their own) in one statement, through `read` (in one round trip: `tenantRead`), without the
 * ORM's three queries and their hydration.
 * @throws DomainError 404 when absent, deleted, another site's, or not visible to this actor
 */
export async function readVisibleJobDetail(read: TenantRead, workflows: WorkflowLookup, siteId: string, actor: JobActor, jobId: string): Promise<JobData> {
  const visible = visibleTo(actor);
  const [row] = await read(visible ? `${detailSql('')} and ${visible}` : detailSql(''), visible ? [jobId, siteId, actor.userId] : [jobId, siteId]);
  if (!row) throw DomainError.notFound('Job', jobId);
  return detailOfRow(workflows, actor, row);
}

/**
 * A stop with its address and state as `actor` may see it (through its job, as `readVisibleJobDetail`), in one
 * statement through `read`.
 * @throws DomainError 404 when absent, another site's, its job deleted, or not visible to this actor
 */
export async function readVisibleStop(read: TenantRead, workflows: WorkflowLookup, siteId: string, actor: JobActor, stopId: string): Promise<StopData> {
  const visible = visibleTo(actor);
  const sql = `select to_jsonb(s) - 'snapshot' as stop, to_jsonb(a) - 'types' as address
    from stop s join job j on j.id = s.job_id and (j.site_id = s.site_id) is true and j.deleted_at is null
    left join address a on a.id = s.address_id and (a.site_id = s.site_id or a.site_id is null)
    where s.id = ? and s.site_id = ?`;
  const [row] = await read(visible ? `${sql} and ${visible}` : sql, visible ? [stopId, siteId, actor.userId] : [stopId, siteId]);
  if (!row) throw DomainError.notFound('Stop', stopId);
  const { stop, address } = row as StopWithAddress;
  const record = stopFromRow(stop);
  return toStopData(record, await workflows(record.workflowId), address ? addressFromRow(address) : null, isStaff(actor.role));
}

/**
 * `visibleJobs` as a condition on the job aliased `j` whose one parameter is the actor's user id, or null for staff
 * (every job of the site). Never true for an actor without a user.
 */
export const visibleTo = (actor: JobActor): string | null => (isStaff(actor.role) ? null : actor.role === 'driver' ? 'j.driver_user_id = ?' : 'j.customer_user_id = ?');

/** @throws DomainError 404 when the job is absent, deleted or another site's (the command never touched it) */
async function detailAndRoute(rows: Record<string, unknown>[], actor: JobActor, jobId: string, workflows: WorkflowLookup): Promise<{ job: JobData; route: EntityRow | null }> {
  const row = rows[0] as DetailRow | undefined;
  if (!row) throw DomainError.notFound('Job', jobId);
  return { job: await detailOfRow(workflows, actor, row), route: (row[ROUTE] as EntityRow | null) ?? null };
}

type DetailRow = EntityRow & { [STOPS]: StopWithAddress[] };

/** The detail view of a job read with {@link JOB_DETAIL_COLUMNS} (other columns of the row are left alone), as `actor` sees it. */
export function detailOfRow(workflows: WorkflowLookup, actor: JobActor, row: EntityRow): Promise<JobData> {
  return detailFromRows(workflows, actor, jobFromRow(row), (row as DetailRow)[STOPS]);
}

/**
 * The detail view of a job and the rows of its stops already read (its `STOPS_OF_JOB`), as `actor` sees it: the job
 * as read or as a move just wrote it; `written` stands in for the stop of the same id (the row a move just wrote,
 * newer than the one read before it).
 */
export async function detailFromRows(workflows: WorkflowLookup, actor: JobActor, job: JobRecord, stopRows: StopWithAddress[], written?: StopRecord): Promise<JobData> {
  const staff = isStaff(actor.role);
  const stops = [];
  for (const { stop, address } of stopRows) {
    const record = written && written.id === stop.id ? written : stopFromRow(stop);
    stops.push(toStopData(record, await workflows(record.workflowId), address ? addressFromRow(address) : null, staff));
  }
  return toJobData(job, await workflows(job.workflowId), stops, staff);
}

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/** An `address` row as JSON (snake_case) as the fields the embedded view reads. */
function addressFromRow(row: EntityRow): AddressFields {
  return {
    id: String(row.id),
    formattedName: String(row.formatted_name),
    streetAddress: text(row.street_address),
    streetAddress2: text(row.street_address2),
    city: text(row.city),
    state: text(row.state),
    postalCode: text(row.postal_code),
    country: text(row.country),
    lat: Number(row.lat),
    lng: Number(row.lng),
  };
}
