import type { EntitySnapshot } from '../../machines/entity-machine.ts';
import type { currentState } from '../../machines/entity-snapshot.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import { auditRecordValues } from '../../persistence/audit.ts';
import { toJobData, toStopData, type JobRecord, type StopRecord } from '../jobs/job-view.ts';
import { toRouteData, type RouteRecord } from '../routes/route-view.ts';
import type { CommandScope, EntityKind } from './apply-transition.ts';
import { knownRow } from './move-reads.ts';

/** The audit log's entity type of each kind of actor. */
export const ENTITY_TYPE_NAMES: Record<EntityKind, string> = { job: 'Job', stop: 'Stop', route: 'Route' };

type StateOf = ReturnType<typeof currentState>;

/** A move as written: the row after it (`entity`), the states it went between and the actor's new snapshot. */
export type WrittenMove = ({ kind: 'job'; entity: JobRecord } | { kind: 'stop'; entity: StopRecord } | { kind: 'route'; entity: RouteRecord }) & {
  workflow: Workflow;
  from: StateOf;
  to: StateOf;
  next: EntitySnapshot;
  /** The machine event that made the move (`job.dispatch`, `state.move`...). */
  eventType: string;
  timestamp: Date;
  /** A job's driver before the move, when known: the event names them if the move took the job from them. */
  previousDriverUserId?: string | null;
  /** A stop's job's driver, when the statement that moved it read it. */
  jobDriverUserId?: string | null;
  /** The reason given with the move (`cancellation_notes`), whatever the move: its audit record keeps it. */
  reason?: string | undefined;
};

/**
 * Records a written move the one way every path records one: its audit record, its `<kind>:state_change` event (the
 * entity after the move, with the state it left) and the actor's new snapshot for the command's end.
 */
export function recordMove(scope: CommandScope, move: WrittenMove): void {
  const { siteId, actor } = scope;
  const { kind, entity, workflow, from, to } = move;
  scope.pending.audits.push(
    auditRecordValues(actor, {
      siteId,
      action: 'state_change',
      entityType: ENTITY_TYPE_NAMES[kind],
      entityId: entity.id,
      before: { workflow_state_id: from.id, state: from.key, phase: from.phase, version: entity.version - 1 },
      after: {
        workflow_state_id: to.id, state: to.key, phase: to.phase, version: entity.version, event: move.eventType, role: actor.role,
        ...(move.reason === undefined ? {} : { reason: move.reason }),
      },
      // Plain values, none secret: the diff is its before and after, so it is not stored twice.
      changesFromData: true,
    }),
  );
  // A fresh object: the state it left is added to it rather than to a copy.
  const data: Record<string, unknown> =
    move.kind === 'job' ? toJobData(move.entity, workflow) : move.kind === 'stop' ? toStopData(move.entity, workflow, null) : toRouteData(move.entity, workflow);
  data.previous_workflow_state_id = from.id;
  data.previous_phase = from.phase;
  // The driver a job was taken from hears of it too (the live feed routes on this field).
  const previousDriver = move.kind === 'job' ? (move.previousDriverUserId ?? driversBefore(scope).get(entity.id)) : null;
  if (move.kind === 'job' && previousDriver && previousDriver !== move.entity.driverUserId) data.previous_driver_user_id = previousDriver;
  // A stop's event names its job's driver, so that it reaches their feed (a stop carries no driver of its own).
  if (move.kind === 'job') driversOfJobs(scope).set(entity.id, move.entity.driverUserId);
  if (move.kind === 'stop') {
    const moved = driversOfJobs(scope);
    const driver = move.jobDriverUserId !== undefined ? move.jobDriverUserId : moved.has(move.entity.jobId) ? moved.get(move.entity.jobId) : knownRow(scope, move.entity.jobId)?.driver_user_id;
    if (typeof driver === 'string') data.driver_user_id = driver;
  }
  scope.pending.events.push({ siteId, event: `${kind}:state_change`, entityType: kind, entityId: entity.id, entityVersion: entity.version, data, timestamp: move.timestamp });
  scope.touched.set(entity.id, { snapshot: move.next, version: entity.version, workflowId: workflow.id });
}

/** A map that lives as long as one command (keyed by its `touched`, which does). */
function perCommand<V>(): (scope: CommandScope) => Map<string, V> {
  const maps = new WeakMap<CommandScope['touched'], Map<string, V>>();
  return (scope) => {
    let map = maps.get(scope.touched);
    if (!map) maps.set(scope.touched, (map = new Map()));
    return map;
  };
}

/**
 * The driver of each job this command moved, as written, for the events of its stops moved after it (a job's
 * dispatch, return or cancellation cascades to them); a stop moved on its own finds its job's driver in its update's
 * answer (`jobDriverUserId`) or in the row its move read (`knownRow`).
 */
const driversOfJobs = perCommand<string | null>();

/** Each job's driver before this command changed it, as `noteDriverBefore` noted it. */
const driversBefore = perCommand<string | null>();

/**
 * Notes a job's driver before this command changed it, for a move whose own write does not read it: a dispatch
 * sets the new driver with the route join, before the job's move is written. Its event then names the driver the
 * job was taken from (`previous_driver_user_id`), as a return's does.
 */
export function noteDriverBefore(scope: CommandScope, jobId: string, driverUserId: string | null): void {
  const drivers = driversBefore(scope);
  if (!drivers.has(jobId)) drivers.set(jobId, driverUserId);
}
