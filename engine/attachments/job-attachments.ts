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
  const added = attachments.filter((a) => !before.includes(a.id));
  for (const attachment of added) {
    em.create(JobAttachmentSchema, { jobId: job.id, attachmentId: attachment.id, siteId, createdByUserId: actor.userId });
  }
  if (added.length > 0) {
    recordAudit(em, actor, {
      siteId,
      action: 'attach',
      entityType: 'Job',
      entityId: job.id,
      before: { attachment_ids: before },
      after: { attachment_ids: [...before, ...added.map((a) => a.id)] },
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
