import { OptimisticLockError } from '@mikro-orm/core';
import { buildEntityMachine, type EntitySnapshot } from '../../machines/entity-machine.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import { initialSnapshot, persistSnapshot } from '../../machines/entity-snapshot.ts';
import { auditRecordValues } from '../../persistence/audit.ts';
import { RouteSchema } from '../../persistence/entities/route.entity.ts';
import { newId } from '../../persistence/ids.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';
import type { EntityRow } from '../jobs/job-view.ts';
import { currentWorkflow, workflowById } from '../workflow/workflow.service.ts';
import { routeFromRow, TERMINAL_PHASES, toRouteData, type RouteRecord } from './route-view.ts';

export type NewRoute = {
  name?: string;
  driverUserId: string | null;
  vehicleId: string | null;
  teamId: string | null;
  serviceDate: string;
  /** Jobs the caller puts on the route right after, shown in the create record and event. */
  jobIds?: string[];
};

/** Reads a route of the scope's site, or null. */
export async function findRoute(scope: CommandScope, routeId: string): Promise<RouteRecord | null> {
  const [row] = await scope.em.execute<EntityRow[]>('select * from route where id = ? and site_id = ?', [routeId, scope.siteId]);
  return row ? routeFromRow(row) : null;
}

/** Refuses changes to a completed or cancelled route. */
export function assertRouteOpen(route: RouteRecord): void {
  if (TERMINAL_PHASES.has(route.phase)) throw DomainError.conflict('ROUTE_CLOSED', `Route ${route.id} is ${route.phase}; it can no longer be changed`);
}

/**
 * Creates a route in its workflow's initial state, with its audit record and the `route:create` event (written at
 * the command's end with the transitions' records). References are the caller's to check.
 */
export async function insertRoute(scope: CommandScope, input: NewRoute): Promise<RouteRecord> {
  const { em, siteId, actor } = scope;
  const workflow = await currentWorkflow(em, 'route');
  const initial = workflow.states.find((s) => s.is_initial)!;
  const snapshot = initialSnapshot(buildEntityMachine(workflow));
  const entity = em.create(RouteSchema, {
    id: newId('route'),
    siteId,
    name: input.name ?? `Route ${input.serviceDate}`,
    workflowId: workflow.id,
    workflowStateId: initial.id,
    phase: initial.phase,
    version: 1,
    snapshot: persistSnapshot(snapshot),
    driverUserId: input.driverUserId,
    vehicleId: input.vehicleId,
    teamId: input.teamId,
    serviceDate: input.serviceDate,
    createdByUserId: actor.userId,
  });
  await em.flush();
  const route = (await findRoute(scope, entity.id))!;
  recordRouteCreated(scope, route, workflow, snapshot, input.jobIds ?? []);
  return route;
}

/**
 * A driver's route for a service day, created in the site's current route workflow (`workflowId`) unless the driver
 * has an open one for that day by the time this statement runs (the caller holds the driver-day lock): one
 * statement, no ORM flush. Null when one exists. Recorded like {@link insertRoute}.
 */
export async function insertRouteUnlessOpen(scope: CommandScope, input: NewRoute & { driverUserId: string }, workflowId: string): Promise<RouteRecord | null> {
  const { siteId, actor } = scope;
  const workflow = await workflowById(scope.em, workflowId);
  const initial = workflow.states.find((s) => s.is_initial)!;
  const snapshot = initialSnapshot(buildEntityMachine(workflow));
  const now = new Date();
  const [row] = await scope.em.execute<EntityRow[]>(
    `insert into route (id, site_id, name, workflow_id, workflow_state_id, phase, version, snapshot, driver_user_id, vehicle_id, team_id, service_date, created_by_user_id, created_at, updated_at)
     select ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?
     where not exists (select 1 from route where site_id = ? and driver_user_id = ? and service_date = ? and phase not in ('completed', 'cancelled'))
     returning *`,
    [
      newId('route'), siteId, input.name ?? `Route ${input.serviceDate}`, workflow.id, initial.id, initial.phase, JSON.stringify(persistSnapshot(snapshot)),
      input.driverUserId, input.vehicleId, input.teamId, input.serviceDate, actor.userId, now, now, siteId, input.driverUserId, input.serviceDate,
    ],
  );
  if (!row) return null;
  const route = routeFromRow(row);
  recordRouteCreated(scope, route, workflow, snapshot, input.jobIds ?? []);
  return route;
}

/** A new route's create record, `route:create` event and touched actor (`route` at version 1, `snapshot` its initial state). */
export function recordRouteCreated(scope: CommandScope, route: RouteRecord, workflow: Workflow, snapshot: EntitySnapshot, jobIds: string[]): void {
  const { siteId, actor } = scope;
  const data = { ...toRouteData(route, workflow), job_ids: jobIds };
  scope.pending.audits.push(auditRecordValues(actor, { siteId, action: 'create', entityType: 'Route', entityId: route.id, before: null, after: data, changesFromData: true }));
  scope.pending.events.push({ siteId, event: 'route:create', entityType: 'route', entityId: route.id, entityVersion: route.version, data, timestamp: scope.clock.now() });
  scope.touched.set(route.id, { snapshot, version: route.version, workflowId: workflow.id });
}

/** Column changes a route edit may make (snake_case column → value). */
export type RouteColumns = Partial<Record<'name' | 'driver_user_id' | 'vehicle_id' | 'team_id' | 'service_date', string | null>>;

/**
 * Writes an edit of a route under its optimistic version check (`... where version = ?`), bumping the version even
 * when only its jobs or stop order changed (`columns` empty), with an audit record (`action`, the route before and
 * after plus `extra`) and a `route:update` event.
 * @throws OptimisticLockError when the route changed since `route` was read (the engine retries the command)
 */
export async function writeRouteChange(
  scope: CommandScope,
  route: RouteRecord,
  columns: RouteColumns,
  action: string,
  extra: { before?: Record<string, unknown>; after?: Record<string, unknown> } = {},
): Promise<RouteRecord> {
  const { siteId, actor } = scope;
  const entries = Object.entries(columns);
  const sets = [...entries.map(([column]) => `${column} = ?`), 'version = version + 1', 'updated_at = ?'];
  const params = [...entries.map(([, value]) => value), new Date(), route.id, siteId, route.version];
  const [row] = await scope.em.execute<EntityRow[]>(`update route set ${sets.join(', ')} where id = ? and site_id = ? and version = ? returning *`, params);
  if (!row) throw OptimisticLockError.lockFailed('Route');
  const updated = routeFromRow(row);
  syncTouchedVersion(scope, updated.id, updated.version);
  const workflow = await workflowById(scope.em, updated.workflowId);
  const before = { ...toRouteData(route, workflow), ...extra.before };
  const after = { ...toRouteData(updated, workflow), ...extra.after };
  scope.pending.audits.push(auditRecordValues(actor, { siteId, action, entityType: 'Route', entityId: route.id, before, after, changesFromData: true }));
  // A route given to another driver names the one it was taken from, so that their feed hears of it.
  const taken = route.driverUserId && route.driverUserId !== updated.driverUserId ? { previous_driver_user_id: route.driverUserId } : {};
  scope.pending.events.push({ siteId, event: 'route:update', entityType: 'route', entityId: route.id, entityVersion: updated.version, data: { ...after, ...taken }, timestamp: scope.clock.now() });
  return updated;
}

/**
 * After a raw write bumped an actor's version outside `applyTransition`: the command's own record of it follows,
 * and a cached copy is dropped (the versioned update would miss and re-read anyway; this saves the miss).
 */
export function syncTouchedVersion(scope: CommandScope, id: string, version: number): void {
  const touched = scope.touched.get(id);
  if (touched) scope.touched.set(id, { ...touched, version });
  scope.registry.drop(scope.siteId, id);
}
