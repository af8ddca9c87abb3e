import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../persistence/audit.ts';
import { AttachmentSchema, JobAttachmentSchema, type Attachment } from '../../persistence/entities/attachment.entity.ts';
import { findVisibleJob } from '../jobs/job-detail.ts';
import type { JobActor } from '../jobs/job-input.ts';
import { requireReadyAttachments } from './attachment.service.ts';

/**
 * Links confirmed attachments to a job the actor can see (a driver their assigned jobs, a customer their own).
 * Linking one twice changes nothing. Drivers and customers link only files they uploaded.
 * @returns every attachment of the job, oldest link first
 * @throws DomainError 404 (the job, or naming `attachment_ids.<n>`), 409 ATTACHMENT_NOT_READY
 */
export async function attachToJob(em: EntityManager, actor: JobActor, siteId: string, jobId: string, attachmentIds: string[]): Promise<Attachment[]> {
  const job = await findVisibleJob(em, actor, jobId);
  const attachments = await requireReadyAttachments(em, attachmentIds, 'attachment_ids', actor);
  const before = await linkedIds(em, job.id);
  const added = await insertLinks(em, siteId, job.id, actor.userId, attachments.map((a) => a.id).filter((id) => !before.includes(id)));
  if (added.length > 0) {
    recordAudit(em, actor, {
      siteId,
      action: 'attach',
      entityType: 'Job',
      entityId: job.id,
      before: { attachment_ids: before },
      after: { attachment_ids: [...before, ...added] },
    });
  }
  await em.flush();
  return jobAttachments(em, actor, job.id);
}

/** A visible job's attachments, oldest link first. @throws DomainError 404 */
export async function jobAttachments(em: EntityManager, actor: JobActor, jobId: string): Promise<Attachment[]> {
  const job = await findVisibleJob(em, actor, jobId);
  const ids = await linkedIds(em, job.id);
  if (ids.length === 0) return [];
  const attachments = await em.find(AttachmentSchema, { id: { $in: ids } });
  return ids.flatMap((id) => attachments.filter((a) => a.id === id));
}

async function linkedIds(em: EntityManager, jobId: string): Promise<string[]> {
  const links = await em.find(JobAttachmentSchema, { jobId }, { orderBy: { createdAt: 'asc', attachmentId: 'asc' } });
  return links.map((l) => l.attachmentId);
}

/**
 * Inserts the links not there yet; one a concurrent request inserted first (a client retrying) is skipped, not a
 * unique violation: linking twice changes nothing.
 * @returns the ids this call linked, in the given order
 */
async function insertLinks(em: EntityManager, siteId: string, jobId: string, userId: string | null, attachmentIds: string[]): Promise<string[]> {
  if (attachmentIds.length === 0) return [];
  const now = new Date();
  const rows = attachmentIds.map(() => '(?, ?, ?, ?, ?)').join(', ');
  const inserted = await em.execute<{ attachment_id: string }[]>(
    `insert into job_attachment (job_id, attachment_id, site_id, created_by_user_id, created_at) values ${rows}
     on conflict (job_id, attachment_id) do nothing returning attachment_id`,
    attachmentIds.flatMap((id) => [jobId, id, siteId, userId, now]),
  );
  const linked = new Set(inserted.map((row) => row.attachment_id));
  return attachmentIds.filter((id) => linked.has(id));
}
