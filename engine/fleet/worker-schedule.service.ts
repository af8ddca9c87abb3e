import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { WorkerScheduleSchema } from '../../persistence/entities/worker-schedule.entity.ts';
import { WorkerSchema } from '../../persistence/entities/worker.entity.ts';
import { auditSnapshot } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';
import { assertValidSchedule, type WorkerScheduleData } from './schedule.ts';

/** The site a schedule belongs to: its times are read on the site's clock. */
export type ScheduleSite = { id: string; timezone: string };

/** A worker's schedule with the timezone its times are read in (the site's). */
export type WorkerScheduleView = WorkerScheduleData & { workerId: string; timezone: string; updatedAt: Date | null };

/**
 * A worker's schedule; a worker never given one (or whose schedule was removed) is not restricted: `weekly: null`
 * and no exceptions, as dispatch reads it.
 * @throws DomainError 404 (field `worker_id`) when the user is not a worker of this site
 */
export async function getWorkerSchedule(em: EntityManager, site: ScheduleSite, workerId: string): Promise<WorkerScheduleView> {
  await assertWorker(em, workerId);
  const schedule = await em.findOne(WorkerScheduleSchema, { userId: workerId });
  return {
    workerId,
    timezone: site.timezone,
    weekly: schedule?.weekly ?? null,
    exceptions: schedule?.exceptions ?? [],
    updatedAt: schedule?.updatedAt ?? null,
  };
}

/**
 * Replaces a worker's weekly slots and exceptions as a whole (sorted, so reads are stable), audited. `weekly: null`
 * restricts only the exceptions' days.
 * @throws DomainError 404 (field `worker_id`), 400 INVALID_SCHEDULE naming the offending field
 */
export async function replaceWorkerSchedule(
  em: EntityManager,
  actor: AuditActor,
  site: ScheduleSite,
  workerId: string,
  input: WorkerScheduleData,
): Promise<WorkerScheduleView> {
  await assertWorker(em, workerId);
  assertValidSchedule(input);
  const weekly = input.weekly && [...input.weekly].sort((a, b) => a.day_of_week - b.day_of_week || a.start_time.localeCompare(b.start_time));
  const exceptions = [...input.exceptions]
    .map((e) => (e.off ? { date: e.date, off: true } : { date: e.date, slots: [...(e.slots ?? [])].sort((a, b) => a.start_time.localeCompare(b.start_time)) }))
    .sort((a, b) => a.date.localeCompare(b.date));
  const existing = await em.findOne(WorkerScheduleSchema, { userId: workerId });
  const before = existing ? auditSnapshot(existing) : null;
  const schedule = existing ?? em.create(WorkerScheduleSchema, { siteId: site.id, userId: workerId, weekly, exceptions });
  schedule.weekly = weekly;
  schedule.exceptions = exceptions;
  recordAudit(em, actor, {
    siteId: site.id, action: existing ? 'update' : 'create', entityType: 'WorkerSchedule', entityId: workerId, before, after: auditSnapshot(schedule),
  });
  await em.flush();
  return getWorkerSchedule(em, site, workerId);
}

/**
 * Removes a worker's schedule, so their hours are no longer restricted; audited as `delete` with the schedule it
 * removed. A worker without one is answered the same and nothing is written.
 * @throws DomainError 404 (field `worker_id`) when the user is not a worker of this site
 */
export async function deleteWorkerSchedule(em: EntityManager, actor: AuditActor, site: ScheduleSite, workerId: string): Promise<void> {
  await assertWorker(em, workerId);
  const existing = await em.findOne(WorkerScheduleSchema, { userId: workerId });
  if (!existing) return;
  recordAudit(em, actor, { siteId: site.id, action: 'delete', entityType: 'WorkerSchedule', entityId: workerId, before: auditSnapshot(existing), after: null });
  em.remove(existing);
  await em.flush();
}

async function assertWorker(em: EntityManager, workerId: string): Promise<void> {
  if (!(await em.count(WorkerSchema, { userId: workerId }))) throw new DomainError(404, 'NOT_FOUND', `Worker ${workerId} not found`, 'worker_id');
}
