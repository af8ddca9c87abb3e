import { OptimisticLockError } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  allowedAvailabilities,
  applyAvailability,
  availabilityOf,
  eventTowards,
  restoreAvailability,
  type Availability,
  type PersistedAvailability,
} from '../../machines/driver-availability.machine.ts';
import { auditRecordValues } from '../../persistence/audit.ts';
import type { CommandScope } from '../commands/apply-transition.ts';
import { DomainError } from '../domain-error.ts';

export type DriverStateRow = {
  site_id: string;
  user_id: string;
  availability: Availability;
  version: number;
  snapshot: PersistedAvailability;
  last_lat: number | null;
  last_lng: number | null;
  last_heading: number | null;
  last_speed: number | null;
  last_accuracy: number | null;
  last_recorded_at: Date | null;
  active_route_id: string | null;
  updated_at: Date;
};

export type DriverStatus = { user_id: string; availability: Availability; version: number; updated_at: string | null };

export async function readDriverState(em: EntityManager, siteId: string, userId: string): Promise<DriverStateRow | null> {
  const [row] = await em.execute<DriverStateRow[]>('select * from driver_state where site_id = ? and user_id = ?', [siteId, userId]);
  return row ?? null;
}

const statusOf = (userId: string, row: DriverStateRow | null): DriverStatus => ({
  user_id: userId,
  availability: row?.availability ?? 'offline',
  version: row?.version ?? 0,
  updated_at: row ? new Date(row.updated_at).toISOString() : null,
});

/**
 * Moves the driver's availability actor to `target` inside a command (run it under the `driver:<userId>` mailbox):
 * the row update under the optimistic version, the audit record and the `driver:status_change` outbox event, in
 * the command's one transaction. Asking for the availability the driver already has changes nothing (PUT is
 * idempotent, so a retried request from a flaky phone connection is not an error).
 * @throws DomainError 409 DRIVER_NOT_ACTIVE for a suspended or inactive worker going anywhere but offline, 409 INVALID_TRANSITION naming the
 *   current availability and the allowed ones;
 *   OptimisticLockError on a race (the engine retries the command once)
 */
export async function setDriverAvailability(scope: CommandScope, userId: string, target: Availability): Promise<DriverStatus> {
  const { row, workerStatus } = await readStateAndWorker(scope, userId);
  const snapshot = restoreAvailability(row?.snapshot ?? null, { officeStoodDown: !isActiveWorker(workerStatus) });
  const current = availabilityOf(snapshot);
  if (current === target) return statusOf(userId, row);
  if (target !== 'offline') assertMayWork(userId, workerStatus);
  const event = eventTowards(snapshot, target);
  const next = event ? applyAvailability(snapshot, event) : null;
  if (!event || !next) {
    const allowed = allowedAvailabilities(snapshot);
    throw new DomainError(409, 'INVALID_TRANSITION', `driver ${userId} cannot go from ${current} to ${target}; allowed: ${allowed.join(', ') || 'none'}`, 'availability', {
      current_state: current,
      allowed_moves: allowed,
    });
  }
  const values = [target, JSON.stringify({ value: availabilityOf(next) }), new Date()];
  // A missing row is created here (version 1); a row another command inserted first makes the insert a no-op, and
  // the retry then takes the update path.
  const [written] = row
    ? await scope.em.execute<DriverStateRow[]>(
        'update driver_state set availability = ?, snapshot = ?, updated_at = ?, version = version + 1 where site_id = ? and user_id = ? and version = ? returning *',
        [...values, scope.siteId, userId, row.version],
      )
    : await scope.em.execute<DriverStateRow[]>(
        'insert into driver_state (availability, snapshot, updated_at, version, site_id, user_id) values (?, ?, ?, 1, ?, ?) on conflict do nothing returning *',
        [...values, scope.siteId, userId],
      );
  if (!written) throw OptimisticLockError.lockFailed('DriverState');
  const status = statusOf(userId, written);
  const before = { availability: current, version: row?.version ?? 0 };
  scope.pending.audits.push(
    auditRecordValues(scope.actor, {
      siteId: scope.siteId,
      action: 'status_change',
      entityType: 'Driver',
      entityId: userId,
      before,
      after: { availability: target, version: status.version, event: event.type },
    }),
  );
  scope.pending.events.push({
    siteId: scope.siteId,
    event: 'driver:status_change',
    entityType: 'driver',
    entityId: userId,
    entityVersion: status.version,
    data: { ...status, previous_availability: current },
    timestamp: scope.clock.now(),
  });
  return status;
}

/** The driver's availability as stored (offline without a row). */
export async function driverStatus(em: EntityManager, siteId: string, userId: string): Promise<DriverStatus> {
  return statusOf(userId, await readDriverState(em, siteId, userId));
}

/**
 * The driver's state row (null without one) and their worker record's operational status (null without one), in
 * one statement: a status change would otherwise read each in a round trip of its own.
 */
async function readStateAndWorker(scope: CommandScope, userId: string): Promise<{ row: DriverStateRow | null; workerStatus: string | null }> {
  const [read] = await scope.em.execute<(DriverStateRow & { worker_status: string | null })[]>(
    `select ds.*, (select operational_status from worker w where w.site_id = ? and w.user_id = ?) as worker_status
     from (select 1) as one left join driver_state ds on ds.site_id = ? and ds.user_id = ?`,
    [scope.siteId, userId, scope.siteId, userId],
  );
  const { worker_status: workerStatus, ...row } = read!;
  return { row: row.user_id === null ? null : row, workerStatus };
}

/**
 * The office's decision outranks the driver's: a worker the office marked `inactive` or `suspended` cannot make
 * themself available (going offline stays possible, from busy too: the machine opens that move for them).
 * @throws DomainError 409 DRIVER_NOT_ACTIVE
 */
function assertMayWork(userId: string, workerStatus: string | null): void {
  if (!isActiveWorker(workerStatus)) {
    throw new DomainError(409, 'DRIVER_NOT_ACTIVE', `driver ${userId} is ${workerStatus} on this site; the office must reactivate them first`, 'availability');
  }
}

/** A driver without a worker record has no office decision against them. */
function isActiveWorker(workerStatus: string | null): boolean {
  return workerStatus === null || workerStatus === 'active';
}
