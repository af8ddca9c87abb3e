import { auditRecordValues } from '../../persistence/audit.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import { DISPATCH_COLUMNS, dispatchColumnValues } from './dispatch-columns.ts';
import type { DispatchDecision, DispatchMethod, DispatchStatus, Strategy } from './dispatch-types.ts';

/**
 * What a scheduled dispatch will do when due: assign the named driver, or let the strategy pick one. `bulk` marks the
 * records of one scheduled bulk distribution (`key` names its queue job, `dispatch.<key>`), so that a sweep can add
 * that one job again for all of them.
 */
export type DispatchPlan = {
  driver_id: string | null;
  vehicle_id: string | null;
  route_id: string | null;
  strategy: Strategy | null;
  require_confirmation: boolean;
  bulk?: { key: string; optimize_routes: boolean };
};

/** A `dispatch` row as stored (snake_case, as the API shows it). */
export type DispatchRow = {
  id: string;
  site_id: string;
  job_id: string | null;
  route_id: string | null;
  team_id: string | null;
  assigned_to_driver_id: string | null;
  assigned_to_vehicle_id: string | null;
  method: DispatchMethod;
  status: DispatchStatus;
  require_confirmation: boolean;
  driver_accepted: boolean;
  driver_accepted_at: Date | null;
  dispatch_at: Date | null;
  dispatched_at: Date | null;
  completed_at: Date | null;
  posted_at: Date | null;
  decision: DispatchDecision | null;
  /** A scheduled dispatch's request, carried out when it falls due. */
  plan: DispatchPlan | null;
  created_by_user_id: string | null;
  is_active: boolean;
  version: number;
  created_at: Date;
  updated_at: Date;
};

export type NewDispatch = Partial<Omit<DispatchRow, 'id' | 'site_id' | 'version' | 'created_at' | 'updated_at'>> & {
  method: DispatchMethod;
  status: DispatchStatus;
};

/**
 * Inserts a dispatch record with its audit record and `dispatch:created` event (written at the command's end).
 * @throws UniqueConstraintViolationException when the job already has an active dispatch (the engine retries once,
 *   then the caller maps it to 409)
 */
export async function insertDispatch(scope: CommandScope, values: NewDispatch): Promise<DispatchRow> {
  const { sql, params } = dispatchInsert(scope, values);
  const [inserted] = await scope.em.execute<DispatchRow[]>(sql, params);
  return recordInsertedDispatch(scope, inserted!);
}

/** The `insert ... returning *` of a dispatch record, for a caller that sends it inside another statement (a CTE). */
export function dispatchInsert(scope: CommandScope, values: NewDispatch): { sql: string; params: unknown[] } {
  const now = new Date();
  const { id, values: params } = dispatchColumnValues(scope, values);
  return {
    sql: `insert into dispatch (id, site_id, ${DISPATCH_COLUMNS.join(', ')}, created_at, updated_at)
     values (?, ?, ${DISPATCH_COLUMNS.map(() => '?').join(', ')}, ?, ?) returning *`,
    params: [id, scope.siteId, ...params, now, now],
  };
}

const TIMESTAMPS = ['driver_accepted_at', 'dispatch_at', 'dispatched_at', 'completed_at', 'posted_at', 'created_at', 'updated_at'] as const;

/** Records an inserted dispatch (audit record, `dispatch:created`): see {@link recordWrittenDispatch}. */
export const recordInsertedDispatch = (scope: CommandScope, inserted: DispatchRow): DispatchRow => recordWrittenDispatch(scope, 'create', null, inserted);

/**
 * Records a dispatch written inside another statement as `insertDispatch` (`before` null) or `updateDispatch`
 * (`action`, the row `before` the change) record theirs; a row that came back as JSON (`to_jsonb`) gets its
 * timestamps as dates first, as a plain `returning *` gives them.
 */
export function recordWrittenDispatch(scope: CommandScope, action: string, before: DispatchRow | null, written: DispatchRow): DispatchRow {
  const row = { ...written };
  for (const column of TIMESTAMPS) if (typeof row[column] === 'string') row[column] = new Date(row[column]);
  record(scope, action, before, row);
  return row;
}

/**
 * Changes a dispatch record under a condition (`where` on top of id and site), audited with a `dispatch:updated`
 * event. Returns null when the condition no longer holds: that is how a claim race is decided (one UPDATE wins, the
 * others find the row changed once the winner commits and PostgreSQL re-checks the condition on the new row).
 * One statement: the row before the change comes from a CTE in the same statement, so the audit's `before` is the
 * row as the statement's snapshot saw it (a writer that committed while this one waited for the row lock is not in
 * it; the condition still is checked against the latest row).
 */
export async function updateDispatch(
  scope: CommandScope,
  id: string,
  changes: Partial<DispatchRow>,
  condition = 'true',
  conditionParams: unknown[] = [],
  action = 'update',
  withJob = false,
): Promise<DispatchRow | null> {
  const { sql, params } = dispatchUpdate(scope, id, changes, condition, conditionParams, withJob);
  const [row] = await scope.em.execute<UpdatedDispatchRow[]>(sql, params);
  return recordUpdatedDispatch(scope, action, row);
}

/** A row of {@link dispatchUpdate}'s statement: the dispatch after the change, the row before, and its job when asked for. */
export type UpdatedDispatchRow = DispatchRow & { before_row: DispatchRow; job_row?: EntityRow | null };

/** The statement of {@link updateDispatch}, for a caller that sends it with another one; record its row with {@link recordUpdatedDispatch}. */
export function dispatchUpdate(scope: CommandScope, id: string, changes: Partial<DispatchRow>, condition: string, conditionParams: unknown[], withJob = false): { sql: string; params: unknown[] } {
  const entries = Object.entries(changes);
  const sets = [...entries.map(([column]) => `${column} = ?`), 'version = version + 1', 'updated_at = ?'];
  const values = entries.map(([column, value]) => (column === 'decision' || column === 'plan' ? JSON.stringify(value) : value));
  const job = withJob ? ', (select to_jsonb(j) from job j where j.id = d.job_id and j.site_id = d.site_id and j.deleted_at is null) as job_row' : '';
  // The CTE's columns have names of their own so that `condition` (unqualified columns) can only mean the dispatch.
  return {
    sql: `with prior as (select d.id as prior_id, to_jsonb(d) as before_row${job} from dispatch d where d.id = ? and d.site_id = ?)
     update dispatch set ${sets.join(', ')} from prior
     where dispatch.id = prior.prior_id and dispatch.site_id = ? and (${condition})
     returning dispatch.*, prior.before_row${withJob ? ', prior.job_row' : ''}`,
    params: [id, scope.siteId, ...values, new Date(), scope.siteId, ...conditionParams],
  };
}

/** Records the row of a {@link dispatchUpdate} statement (audit record, `dispatch:updated`) as `action`; null when no row was changed. */
export function recordUpdatedDispatch(scope: CommandScope, action: string, row: UpdatedDispatchRow | undefined): DispatchRow | null {
  if (!row) return null;
  const { before_row: before, job_row: jobRow, ...after } = row;
  if (jobRow) jobsRead.set(after, jobRow);
  record(scope, action, before, after);
  return after;
}

const jobsRead = new WeakMap<DispatchRow, EntityRow>();

/** The dispatch's job (`select *`, not deleted) as the statement of `updateDispatch(..., withJob)` that wrote `row` read it; unlocked. */
export const jobReadWithUpdate = (row: DispatchRow): EntityRow | undefined => jobsRead.get(row);

const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null);

/** The dispatch as the API and the events show it (the decision included). */
export function toDispatchData(row: DispatchRow) {
  return {
    id: row.id,
    site_id: row.site_id,
    job_id: row.job_id,
    route_id: row.route_id,
    team_id: row.team_id,
    assigned_to_driver_id: row.assigned_to_driver_id,
    assigned_to_vehicle_id: row.assigned_to_vehicle_id,
    method: row.method,
    status: row.status,
    require_confirmation: row.require_confirmation,
    driver_accepted: row.driver_accepted,
    driver_accepted_at: iso(row.driver_accepted_at),
    dispatch_at: iso(row.dispatch_at),
    dispatched_at: iso(row.dispatched_at),
    completed_at: iso(row.completed_at),
    posted_at: iso(row.posted_at),
    decision: row.decision,
    created_by_user_id: row.created_by_user_id,
    is_active: row.is_active,
    version: row.version,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export type DispatchData = ReturnType<typeof toDispatchData>;

/**
 * A record with its decision cut to the strategy and the winner: what a driver may see (never how colleagues were
 * ranked or why they were left out), and what the audit and the event keep (the whole decision stays on the record).
 */
export function toBriefDispatchData(row: DispatchRow): BriefDispatchData {
  return { ...toDispatchData(row), decision: row.decision ? { strategy: row.decision.strategy, winner: row.decision.winner } : null };
}

export type BriefDispatchData = Omit<DispatchData, 'decision'> & { decision: Pick<DispatchDecision, 'strategy' | 'winner'> | null };

function record(scope: CommandScope, action: string, before: DispatchRow | null, after: DispatchRow): void {
  const { siteId, actor } = scope;
  // The decision can be long: the audit keeps the record's own fields, the decision stays on the dispatch. One view
  // of the record for the audit and the event (the audit keeps copies of its own: `auditRecordValues`).
  const data = toBriefDispatchData(after);
  scope.pending.audits.push(auditRecordValues(actor, { siteId, action, entityType: 'Dispatch', entityId: after.id, before: before ? toBriefDispatchData(before) : null, after: data, changesFromData: true }));
  scope.pending.events.push({
    siteId,
    event: before ? 'dispatch:updated' : 'dispatch:created',
    entityType: 'dispatch',
    entityId: after.id,
    entityVersion: after.version,
    data,
    timestamp: scope.clock.now(),
  });
}
