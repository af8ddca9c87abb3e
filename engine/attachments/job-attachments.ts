import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import { AttachmentSchema, JobAttachmentSchema, type Attachment } from '../../persistence/entities/attachment.entity.ts';
import { DomainError } from '../domain-error.ts';
import { findVisibleJob } from '../jobs/job-detail.ts';
import type { JobActor } from '../jobs/job-input.ts';
import { requireReadyAttachments } from './attachment.service.ts';

/** An attachment as linked to a job: to one of its stops (`stopId`), or to the job as a whole (null). */
export type LinkedAttachment = { attachment: Attachment; stopId: string | null };

/**
 * Links confirmed attachments to a job the actor can see (a driver their assigned jobs, a customer their own), and
 * to one of its stops when `stopId` is given (what a stop move's `attachment` requirement looks for). Linking one
 * twice changes nothing, except that a link to the job as a whole may be narrowed to a stop. Drivers and customers
 * link only files they uploaded.
 * @returns every attachment of the job, oldest link first
 * @throws DomainError 404 (the job, `stop_id`, or naming `attachment_ids.<n>`), 409 ATTACHMENT_NOT_READY,
 *   409 ATTACHMENT_ON_ANOTHER_STOP naming `attachment_ids.<n>` (already linked to another stop of the job)
 */
export async function attachToJob(em: EntityManager, actor: JobActor, siteId: string, jobId: string, attachmentIds: string[], stopId?: string): Promise<LinkedAttachment[]> {
  const job = await findVisibleJob(em, actor, jobId);
  if (stopId !== undefined) await assertStopOfJob(em, job.id, stopId);
  const attachments = await requireReadyAttachments(em, attachmentIds, 'attachment_ids', actor);
  const before = await links(em, job.id);
  const stopOf = new Map(before.map((link) => [link.attachmentId, link.stopId ?? null]));
  const ids = attachments.map((a) => a.id);
  if (stopId !== undefined) {
    const elsewhere = ids.find((id) => (stopOf.get(id) ?? stopId) !== stopId);
    if (elsewhere) {
      throw new DomainError(409, 'ATTACHMENT_ON_ANOTHER_STOP', `Attachment ${elsewhere} is linked to stop ${stopOf.get(elsewhere)} of this job`, `attachment_ids.${attachmentIds.indexOf(elsewhere)}`);
    }
  }
  const added = await insertLinks(em, siteId, job.id, stopId ?? null, actor.userId, ids.filter((id) => !stopOf.has(id)));
  const narrowed = stopId === undefined ? [] : await narrowLinks(em, job.id, stopId, ids.filter((id) => stopOf.has(id) && stopOf.get(id) === null));
  if (added.length > 0 || narrowed.length > 0) {
    const beforeIds = before.map((link) => link.attachmentId);
    recordAudit(em, actor, {
      siteId,
      action: 'attach',
      entityType: 'Job',
      entityId: job.id,
      before: { attachment_ids: beforeIds },
      after: { attachment_ids: [...beforeIds, ...added], ...(stopId === undefined ? {} : { stop_id: stopId, stop_attachment_ids: [...added, ...narrowed] }) },
    });
  }
  await em.flush();
  return jobAttachments(em, actor, job.id);
}

/** A visible job's attachments, oldest link first, each with the stop it is linked to. @throws DomainError 404 */
export async function jobAttachments(em: EntityManager, actor: JobActor, jobId: string): Promise<LinkedAttachment[]> {
  const job = await findVisibleJob(em, actor, jobId);
  const linked = await links(em, job.id);
  if (linked.length === 0) return [];
  const attachments = await em.find(AttachmentSchema, { id: { $in: linked.map((link) => link.attachmentId) } });
  return linked.flatMap((link) => attachments.filter((a) => a.id === link.attachmentId).map((attachment) => ({ attachment, stopId: link.stopId ?? null })));
}

/** The job's links, oldest first; read fresh (a link narrowed by SQL in this transaction is not stale). */
function links(em: EntityManager, jobId: string) {
  return em.find(JobAttachmentSchema, { jobId }, { orderBy: { createdAt: 'asc', attachmentId: 'asc' }, refresh: true });
}

async function assertStopOfJob(em: EntityManager, jobId: string, stopId: string): Promise<void> {
  const [stop] = await em.execute('select 1 from stop where id = ? and job_id = ?', [stopId, jobId]);
  if (!stop) throw new DomainError(404, 'NOT_FOUND', `Stop ${stopId} is not a stop of job ${jobId}`, 'stop_id');
}

/**
 * Inserts the links not there yet; one a concurrent request inserted first (a client retrying) is skipped, not a
 * unique violation: linking twice changes nothing.
 * @returns the ids this call linked, in the given order
 */
async function insertLinks(em: EntityManager, siteId: string, jobId: string, stopId: string | null, userId: string | null, attachmentIds: string[]): Promise<string[]> {
  if (attachmentIds.length === 0) return [];
  const now = new Date();
  const rows = attachmentIds.map(() => '(?, ?, ?, ?, ?, ?)').join(', ');
  const inserted = await em.execute<{ attachment_id: string }[]>(
    `insert into job_attachment (job_id, attachment_id, site_id, stop_id, created_by_user_id, created_at) values ${rows}
     on conflict (job_id, attachment_id) do nothing returning attachment_id`,
    attachmentIds.flatMap((id) => [jobId, id, siteId, stopId, userId, now]),
  );
  const linked = new Set(inserted.map((row) => row.attachment_id));
  return attachmentIds.filter((id) => linked.has(id));
}

/** Narrows links to the job as a whole down to `stopId`; @returns the ids it narrowed. */
async function narrowLinks(em: EntityManager, jobId: string, stopId: string, attachmentIds: string[]): Promise<string[]> {
  if (attachmentIds.length === 0) return [];
  const rows = await em.execute<{ attachment_id: string }[]>(
    `update job_attachment set stop_id = ? where job_id = ? and stop_id is null and attachment_id in (${attachmentIds.map(() => '?').join(', ')}) returning attachment_id`,
    [stopId, jobId, ...attachmentIds],
  );
  const narrowed = new Set(rows.map((row) => row.attachment_id));
  return attachmentIds.filter((id) => narrowed.has(id));
}
