import { OptimisticLockError } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { buildEntityMachine, type ActingRole, type EntityEvent, type EntitySnapshot, type MoveFacts } from '../../machines/entity-machine.ts';
import { isFailureMove } from '../../machines/failure-move.ts';
import { applyEvent, currentState, restoreSnapshot, type PersistedEntitySnapshot } from '../../machines/entity-snapshot.ts';
import type { PhaseEvent, Workflow } from '../../machines/workflow.schema.ts';
import type { AuditActor, AuditRecordValues } from '../../persistence/audit.ts';
import type { DomainEvent } from '../../persistence/outbox.ts';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain-error.ts';
import { jobFromRow, stopFromRow, type EntityRow, type JobRecord, type StopRecord } from '../jobs/job-view.ts';
import { routeFromRow, type RouteRecord } from '../routes/route-view.ts';
import type { ActorRegistry } from '../runtime/actor-registry.ts';
import { deferWrite } from '../runtime/deferred-writes.ts';
import { stopCascadeOf } from './job-stop-cascade.ts';
import { ENTITY_TYPE_NAMES, recordMove, type WrittenMove } from './move-records.ts';
import { noteBuiltJob, noteWritten } from './move-reads.ts';
import { moveFacts } from './move-facts.ts';
import { refusalOf } from './move-refusal.ts';
import { moveUpdate } from './move-update.ts';
import { workflowById } from '../workflow/workflow.service.ts';

export type EntityKind = 'job' | 'stop' | 'route';

/** What the command path reads and writes of an entity of any kind. */
export type EntityRecord = JobRecord | StopRecord | RouteRecord;

/** A move to a named state (`workflow_state_id`), or a phase event mapped to the site's target state. */
export type TransitionRequest = { kind: 'move'; toStateId: string } | { kind: 'phase'; event: PhaseEvent };

export type CommandActor = AuditActor & { role: ActingRole };

/**
 * Audit records and outbox events of the command's transitions, written together at the end of the command (one
 * statement, sent with its COMMIT), in the order the transitions happened.
 */
export type PendingRecords = { audits: AuditRecordValues[]; events: DomainEvent[] };

/** One command's unit of work: its transaction, who acts, and the actors it touched (cached after commit). */
export type CommandScope = {
  em: EntityManager;
  siteId: string;
  actor: CommandActor;
  clock: Clock;
  registry: ActorRegistry;
  touched: Map<string, { snapshot: EntitySnapshot; version: number; workflowId: string }>;
  pending: PendingRecords;
  /** Present in a command's own transaction (`engine.command`), absent in group commit: see {@link PlanAhead}. */
  planAhead?: PlanAhead;
};

/**
 * For writes planned from memory rather than from reads (a dispatch that knows the driver's route): the statement
 * goes out with the command's next one (`deferStatements`; it checks in the database that its plan still holds,
 * else the command fails and runs again), and the memory learns what was written only once it committed.
 */
export type PlanAhead = { afterCommit(callback: () => void): void };

export type Applied = {
  kind: EntityKind;
  entity: EntityRecord;
  workflow: Workflow;
  from: { id: string; key: string; phase: string };
  to: { id: string; key: string; phase: string };
  /** A failure (`isFailureMove`): it cancels a job's open stops, which the rules of a job move read from here. */
  failure: boolean;
};

/** Reads a job (not deleted), a stop or a route of the scope's site, as the command path uses it. */
export async function loadEntity(scope: CommandScope, kind: EntityKind, id: string): Promise<EntityRecord | null> {
  const sql = kind === 'job' ? 'select * from job where id = ? and site_id = ? and deleted_at is null' : `select * from ${kind} where id = ? and site_id = ?`;
  const [row] = await scope.em.execute<EntityRow[]>(sql, [id, scope.siteId]);
  return row ? fromRow(kind, row) : null;
}

const fromRow = (kind: EntityKind, row: EntityRow): EntityRecord => (kind === 'job' ? jobFromRow(row) : kind === 'stop' ? stopFromRow(row) : routeFromRow(row));

/**
 * A move worked out before it is written; `now` stamps completed_at / cancelled_at and the outbox event; `reason`
 * (the `cancellation_notes` given with it) goes into its audit record.
 */
type Planned = { workflow: Workflow; snapshot: EntitySnapshot; next: EntitySnapshot; event: EntityEvent; now: Date; reason?: string };

/**
 * Applies one transition inside the command's transaction: `can()` first (409 INVALID_TRANSITION naming the
 * current state and the allowed moves, nothing written), then the row update under the optimistic version check
 * (`... where version = ? returning *`); the audit record and the `<kind>:state_change` outbox event are collected
 * in `scope.pending`, written at the end of the command.
 *
 * The row is read first unless `loaded` gives it, or the actor is known (touched earlier in this command, or cached
 * in the registry) with its version: then the versioned update alone checks it, and a miss (a stale cache, a
 * refused move, an unknown entity) falls back to reading the row, so the outcome is the same as reading it first.
 * @throws DomainError 404, 400 UNKNOWN_STATE_ID, 409 INVALID_TRANSITION; OptimisticLockError on a version race
 */
export async function applyTransition(
  scope: CommandScope,
  kind: EntityKind,
  id: string,
  request: TransitionRequest,
  notes: { cancellationNotes?: string } = {},
  loaded?: EntityRecord,
): Promise<Applied> {
  const { siteId } = scope;
  const cached = scope.registry.get(siteId, id, scope.clock.now().getTime());
  const known = scope.touched.get(id) ?? cached;
  if (!loaded && known) {
    const planned = await plan(scope, kind, id, known.workflowId, known.snapshot, request, notes);
    if (planned) {
      const row = await update(scope, kind, id, known.version, planned, notes);
      if (row) return applied(scope, kind, row, planned);
      // A stale cache hit (or the row is gone): forget it, and read the row.
      if (known === cached) scope.registry.drop(siteId, id);
    }
  }
  const entity = loaded ?? (await loadEntity(scope, kind, id));
  if (!entity) throw DomainError.notFound(ENTITY_TYPE_NAMES[kind], id);
  const planned = await planLoaded(scope, kind, entity, request, notes);
  if (isRefusal(planned)) throw planned.refusal();
  const row = await update(scope, kind, id, entity.version, planned, notes);
  if (!row) throw OptimisticLockError.lockFailed(ENTITY_TYPE_NAMES[kind]);
  return applied(scope, kind, row, planned);
}

/**
 * Applies a move to an entity whose row this command has just read (`row`, as `select *` gives it), without reading
 * it again: as {@link applyTransition} given the row, a refused move is 409 INVALID_TRANSITION and sends nothing.
 * When the row was read `for update` in this transaction (`locked`), no other transaction can change it before the
 * command ends: a stop's update is then queued to go out with the command's next statement (its COMMIT when nothing
 * follows: `deferWrite`) instead of in a round trip of its own, and the row after the move is the row read with the
 * move's changes, as `returning *` would give it. The queued update still checks that it wrote its row
 * (`checkedWrite`), for another command of the same group-commit batch. A job's move (one that leaves its stops
 * alone) is queued the same way, locked or not: its check is then what finds a job moved since the read.
 * @throws DomainError 400 UNKNOWN_STATE_ID, 409 INVALID_TRANSITION; OptimisticLockError on a version race
 */
export async function applyKnown(...move: KnownMove): Promise<Applied> {
  const done = await applyKnownOrRefusal(...move);
  if (isRefusal(done)) throw done.refusal();
  return done;
}

/**
 * {@link applyKnown} for a rule that applies only when the workflow allows it (the cascades): a refused move is null,
 * not a 409 thrown and caught. Building that error (its message lists the allowed moves, and an Error captures its
 * stack) cost more than the move's check; "a stop started starts its job" is refused on most stop moves, as the job
 * is already running.
 */
export async function applyKnownIfAllowed(...move: KnownMove): Promise<Applied | null> {
  const done = await applyKnownOrRefusal(...move);
  return isRefusal(done) ? null : done;
}

/** What {@link applyKnown} takes: the scope, the kind, the row read, the move, its notes, and whether the row is locked. */
type KnownMove = Parameters<typeof applyKnownOrRefusal>;

async function applyKnownOrRefusal(
  scope: CommandScope,
  kind: EntityKind,
  row: EntityRow,
  request: TransitionRequest,
  notes: { cancellationNotes?: string } = {},
  locked = false,
): Promise<Applied | Refusal> {
  const entity = fromRow(kind, row);
  const planned = await planLoaded(scope, kind, entity, request, notes);
  if (isRefusal(planned)) return planned;
  if ((locked && kind === 'stop') || kind === 'job') {
    const write = moveUpdate(kind, { id: entity.id, siteId: scope.siteId, version: entity.version }, planned, notes);
    // A job's row is not locked: its queued update still checks its version (`checkedWrite`), and a job another
    // transaction moved since the read makes it raise, so the command fails and runs again on new reads. Not a move
    // that cascades to the stops: that one reads them in its own statement (`update`).
    const deferrable = kind === 'stop' || !stopCascadeOf(write);
    const after = { ...row, ...write.changes };
    if (deferrable && deferWrite(scope.em, checkedWrite(write.sql, kind), write.params)) {
      const done = applied(scope, kind, after, planned, row.driver_user_id);
      if (kind === 'job') noteBuiltJob(scope, after);
      return done;
    }
  }
  const written = await update(scope, kind, entity.id, entity.version, planned, notes);
  if (!written) throw OptimisticLockError.lockFailed(ENTITY_TYPE_NAMES[kind]);
  return applied(scope, kind, written, planned, row.driver_user_id);
}

/**
 * A versioned update that raises (SQLSTATE DP001, `queued_write_holds`) when it changed no row: queued with the next
 * statement, its result unread, it cannot otherwise tell that another unit of the same batch (same transaction, so
 * the row lock does not keep it out) moved the row first.
 */
const checkedWrite = (sql: string, kind: EntityKind): string => `with written as (${sql} returning 1) select queued_write_holds(count(*) = 1, '${kind}') from written`;

/** A move the workflow refuses: the 409 INVALID_TRANSITION or 422 REQUIREMENT_NOT_MET to throw, built only when it is thrown. */
type Refusal = { refusal: () => DomainError };
const isRefusal = <T extends object>(planned: T | Refusal): planned is Refusal => 'refusal' in planned;

/**
 * The move of an entity read in this command: from the snapshot this command (or the registry) holds for its version,
 * else from its row; or its refusal.
 */
async function planLoaded(
  scope: CommandScope,
  kind: EntityKind,
  entity: EntityRecord,
  request: TransitionRequest,
  notes: { cancellationNotes?: string },
): Promise<Planned | Refusal> {
  const workflow = await workflowById(scope.em, entity.workflowId);
  const machine = buildEntityMachine(workflow);
  const inScope = scope.touched.get(entity.id);
  const cached = scope.registry.get(scope.siteId, entity.id, scope.clock.now().getTime());
  const snapshot =
    inScope && inScope.version === entity.version
      ? inScope.snapshot
      : cached && cached.version === entity.version
        ? cached.snapshot
        : restoreSnapshot(machine, entity.snapshot as PersistedEntitySnapshot);
  const event = toEvent(workflow, kind, request, scope.actor.role, await moveFacts(scope, workflow, kind, entity.id, notes));
  const next = applyEvent(machine, snapshot, event);
  if (!next) return { refusal: () => refusalOf(kind, entity.id, { workflow, machine, snapshot, event }, request) };
  return { workflow, snapshot, next, event, now: scope.clock.now(), ...reasonOf(notes) };
}

/** The move from a known snapshot, or null when it would be refused (or the request is invalid): the caller then reads the row. */
async function plan(
  scope: CommandScope,
  kind: EntityKind,
  id: string,
  workflowId: string,
  snapshot: EntitySnapshot,
  request: TransitionRequest,
  notes: { cancellationNotes?: string },
): Promise<Planned | null> {
  const workflow = await workflowById(scope.em, workflowId);
  if (request.kind === 'move' && !workflow.states.some((s) => s.id === request.toStateId)) return null;
  const event = toEvent(workflow, kind, request, scope.actor.role, await moveFacts(scope, workflow, kind, id, notes));
  const next = applyEvent(buildEntityMachine(workflow), snapshot, event);
  return next ? { workflow, snapshot, next, event, now: scope.clock.now(), ...reasonOf(notes) } : null;
}

const reasonOf = (notes: { cancellationNotes?: string }): { reason?: string } => (notes.cancellationNotes === undefined ? {} : { reason: notes.cancellationNotes });

/** `update ... where version = ? returning *`: the updated row, or undefined when the version (or the row) is not the one expected. */
async function update(
  scope: CommandScope,
  kind: EntityKind,
  id: string,
  version: number,
  planned: Planned,
  notes: { cancellationNotes?: string },
): Promise<EntityRow | undefined> {
  const write = moveUpdate(kind, { id, siteId: scope.siteId, version }, planned, notes);
  const { params, jobReturned } = write;
  // A stop's returns its job's driver too, whom its event names (`recordMove`).
  const sql = kind === 'stop' ? `${write.sql} returning *, ${JOB_DRIVER_OF_STOP}` : `${write.sql} returning *`;
  const cascade = kind === 'job' ? stopCascadeOf(write) : null;
  if (!cascade) {
    const [row] = await scope.em.execute<EntityRow[]>(sql, params);
    return row;
  }
  // The stops this move cascades to (those in the cascade's phases), read in the same statement rather than in a
  // round trip of their own, and locked (`for update`, the lock their own updates would take, only taken sooner) so
  // that their updates cannot miss and may go out later (`applyKnown`). A stop another transaction is moving is
  // waited for and read as it committed (a stop it moved out of those phases is not read); otherwise the statement's
  // snapshot, as a read right after would see them, since nothing else in this transaction writes them in between.
  // And, for a job returned to unassigned (the one move whose route cascade reads it), the route it was on before
  // (the statement's snapshot of `job` is from before its own update).
  // And its open dispatch records (the driver's, which the return ends: `afterJobMove`).
  const routeBefore = jobReturned
    ? `, (select j.route_id from job j where j.id = moved.id and j.site_id = moved.site_id) as ${ROUTE_BEFORE},
       (select j.driver_user_id from job j where j.id = moved.id and j.site_id = moved.site_id) as ${DRIVER_BEFORE},
       (select coalesce(json_agg(d.id), '[]'::json) from dispatch d
         where d.job_id = moved.id and d.site_id = moved.site_id and d.is_active and d.status <> 'completed') as ${DISPATCHES_BEFORE}`
    : '';
  const phases = cascade.phases.map((phase) => `'${phase}'`).join(', ');
  const [row] = await scope.em.execute<(EntityRow & { [STOPS]: EntityRow[] })[]>(
    `with moved as (${sql})
     select moved.*, (select coalesce(json_agg(s order by s.sort_order), '[]'::json) from (select * from stop s
       where s.job_id = moved.id and s.site_id = moved.site_id and s.phase in (${phases}) for update) s) as ${STOPS}${routeBefore}
     from moved`,
    params,
  );
  return row;
}

const JOB_DRIVER = 'job_driver_of_stop';
const JOB_DRIVER_OF_STOP = `(select j.driver_user_id from job j where j.id = stop.job_id and j.site_id = stop.site_id) as ${JOB_DRIVER}`;
const STOPS = 'stops_read_with_move';
const ROUTE_BEFORE = 'route_before_move';
const DRIVER_BEFORE = 'driver_before_move';
const DISPATCHES_BEFORE = 'open_dispatches_before_move';
const stopsRead = new WeakMap<Applied, EntityRow[]>();
const routesBefore = new WeakMap<Applied, string | null>();
const dispatchesBefore = new WeakMap<Applied, string[]>();

/** The ids of a returned job's open dispatch records before its return, when the statement that moved it read them. */
export const openDispatchesBeforeMove = (move: Applied): string[] => dispatchesBefore.get(move) ?? [];

/**
 * The route a job was on before its move (null: none), when the statement that moved it read it (a return to
 * unassigned, which cascades to its stops); undefined otherwise.
 */
export const routeBeforeMove = (move: Applied): string | null | undefined => (routesBefore.has(move) ? routesBefore.get(move)! : undefined);

/**
 * The job's stops its move cascades to (those in the cascade's phases), as the statement that moved it read and
 * locked them (`select *` rows, in stop order); undefined when the move cascades to none.
 */
export const stopsReadWithMove = (move: Applied): EntityRow[] | undefined => stopsRead.get(move);

/**
 * Records a written move (audit, event, actor) and keeps the stops its statement read for the cascade.
 * `driverBefore`: a job's driver before the move, when the caller read the row (else its statement's, for a return).
 */
function applied(scope: CommandScope, kind: EntityKind, row: EntityRow, planned: Planned, driverBefore?: unknown): Applied {
  const { workflow, snapshot, next, event, now, reason } = planned;
  const entity = fromRow(kind, row);
  const from = currentState(workflow, snapshot);
  const to = currentState(workflow, next);
  const previousDriverUserId = ((driverBefore ?? row[DRIVER_BEFORE]) as string | null | undefined) ?? null;
  // fromRow(kind, ...) is the record of that kind; the union cannot say so.
  const jobDriverUserId = JOB_DRIVER in row ? ((row[JOB_DRIVER] as string | null) ?? null) : undefined;
  recordMove(scope, { kind, entity, workflow, from, to, next, eventType: event.type, timestamp: now, previousDriverUserId, jobDriverUserId, reason } as WrittenMove);
  noteWritten(scope, kind, entity);
  const result: Applied = { kind, entity, workflow, from, to, failure: isFailureMove(workflow, from.key, to.key) };
  const stops = row[STOPS] as EntityRow[] | undefined;
  if (stops) stopsRead.set(result, stops);
  if (ROUTE_BEFORE in row) routesBefore.set(result, (row[ROUTE_BEFORE] as string | null) ?? null);
  if (DISPATCHES_BEFORE in row) dispatchesBefore.set(result, row[DISPATCHES_BEFORE] as string[]);
  return result;
}

function toEvent(workflow: Workflow, kind: EntityKind, request: TransitionRequest, role: ActingRole, facts: MoveFacts): EntityEvent {
  if (request.kind === 'phase') return { type: `${kind}.${request.event}`, role, facts };
  const target = workflow.states.find((s) => s.id === request.toStateId);
  if (!target) {
    throw DomainError.invalid('UNKNOWN_STATE_ID', `${request.toStateId} is not a state of this ${kind}'s workflow`, 'workflow_state_id');
  }
  return { type: 'state.move', to: target.key, role, facts };
}
