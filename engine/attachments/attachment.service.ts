import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { AttachmentSchema, type Attachment } from '../../persistence/entities/attachment.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { auditSnapshot } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';
import { isAllowedType, type AttachmentSettings } from './attachment-settings.ts';
import { lockAttachment } from './attachment-lock.ts';
import type { AttachmentStorage, SiteRef, UploadTarget } from './attachment-storage.ts';
import { matchesContentType } from './content-sniffing.ts';

/** Who asks: staff (admin, dispatcher, system) see the site's attachments; drivers and customers their own. */
export type AttachmentViewer = { userId: string | null; role: string };

/** What presign and confirm need besides the database. */
export type AttachmentDeps = { storage: AttachmentStorage; settings: AttachmentSettings; now: Date };

export type PresignInput = { file_name: string; content_type: string; size: number; purpose?: string };

/**
 * Registers an upload: checks the announced type and size against the configured limits, records a `pending`
 * attachment, and returns where to PUT the file (a signed URL valid for ATTACHMENT_URL_TTL_SECONDS).
 * @throws DomainError 400 CONTENT_TYPE_NOT_ALLOWED (field `content_type`), 400 FILE_TOO_LARGE (field `size`)
 */
export async function presignUpload(
  em: EntityManager,
  deps: AttachmentDeps,
  actor: AuditActor,
  site: SiteRef,
  input: PresignInput,
): Promise<{ attachment: Attachment; upload: UploadTarget }> {
  const contentType = normalizeType(input.content_type);
  if (!isAllowedType(deps.settings, contentType)) {
    throw DomainError.invalid('CONTENT_TYPE_NOT_ALLOWED', `${contentType} is not accepted; accepted: ${deps.settings.allowedTypes.join(', ')}`, 'content_type');
  }
  if (input.size > deps.settings.maxBytes) {
    throw DomainError.invalid('FILE_TOO_LARGE', `Files are limited to ${deps.settings.maxBytes} bytes`, 'size');
  }
  const storedName = randomBytes(16).toString('hex');
  const expiresAt = new Date(deps.now.getTime() + deps.settings.urlTtlSeconds * 1000);
  const attachment = em.create(AttachmentSchema, {
    id: newId('attachment'),
    siteId: site.id,
    createdByUserId: actor.userId,
    fileName: input.file_name,
    contentType,
    size: input.size,
    purpose: input.purpose ?? null,
    storage: deps.storage.kind,
    storedName,
    remotePath: `${site.id}/${storedName}`,
    status: 'pending',
    uploadExpiresAt: expiresAt,
    isActive: true,
  });
  recordAudit(em, actor, { siteId: site.id, action: 'create', entityType: 'Attachment', entityId: attachment.id, before: null, after: auditSnapshot(attachment) });
  await em.flush();
  return { attachment, upload: await deps.storage.uploadTarget(attachment, site, expiresAt) };
}

/**
 * Marks an uploaded attachment ready after checking what storage holds: exactly the announced size, the announced
 * content type (as stored, where the driver keeps it) and first bytes that agree with it. The checked upload then
 * becomes the file downloads serve, which no upload URL can replace. Confirming a ready attachment again changes
 * nothing. Holds the attachment's row lock (see lockAttachment) until the caller's transaction ends.
 * @throws DomainError 404, 409 UPLOAD_MISSING / UPLOAD_CHANGED, 422 SIZE_MISMATCH / CONTENT_TYPE_MISMATCH
 */
export async function confirmAttachment(em: EntityManager, deps: AttachmentDeps, actor: AuditActor, viewer: AttachmentViewer, id: string): Promise<Attachment> {
  // Locked before it is read, so the status seen is the one a concurrent upload or confirmation left.
  await lockAttachment(em, id);
  const attachment = await getAttachment(em, viewer, id);
  if (attachment.status === 'ready') return attachment;
  const stored = await deps.storage.inspect(attachment);
  if (!stored) throw DomainError.conflict('UPLOAD_MISSING', `Nothing was uploaded for attachment ${id}`);
  if (stored.size !== attachment.size) {
    throw DomainError.unprocessable('SIZE_MISMATCH', `The upload has ${stored.size} bytes; ${attachment.size} were announced`);
  }
  const storedType = stored.contentType === null ? attachment.contentType : normalizeType(stored.contentType);
  if (storedType !== attachment.contentType || !matchesContentType(attachment.contentType, stored.head)) {
    throw DomainError.unprocessable('CONTENT_TYPE_MISMATCH', `The upload's content is not ${attachment.contentType}`);
  }
  await deps.storage.seal(attachment, stored);
  const before = auditSnapshot(attachment);
  attachment.status = 'ready';
  attachment.confirmedAt = deps.now;
  recordAudit(em, actor, { siteId: attachment.siteId, action: 'confirm', entityType: 'Attachment', entityId: id, before, after: auditSnapshot(attachment) });
  await em.flush();
  return attachment;
}

/**
 * An attachment the viewer may read: staff any of the site's; a driver or a customer their own uploads, and those
 * linked to a job they see (their assigned jobs, their own), as `GET /job/attachments` lists them.
 * @throws DomainError 404 when absent, another site's, or none of the above
 */
export async function getAttachment(em: EntityManager, viewer: AttachmentViewer, id: string): Promise<Attachment> {
  const attachment = await em.findOne(AttachmentSchema, { id, isActive: true });
  if (!attachment || !(canSee(viewer, attachment) || (await linkedToVisibleJob(em, viewer, id)))) throw DomainError.notFound('Attachment', id);
  return attachment;
}

async function linkedToVisibleJob(em: EntityManager, viewer: AttachmentViewer, id: string): Promise<boolean> {
  const party = viewer.role === 'driver' ? 'driver_user_id' : viewer.role === 'customer' ? 'customer_user_id' : null;
  if (!party || viewer.userId === null) return false;
  const [row] = await em.execute(
    `select 1 from job_attachment ja join job j on j.id = ja.job_id and j.site_id = ja.site_id
      where ja.attachment_id = ? and j.${party} = ? and j.deleted_at is null limit 1`,
    [id, viewer.userId],
  );
  return row !== undefined;
}

/**
 * The attachments a job, a chat message or the branding may reference: each must exist on this site, be visible to
 * the viewer (when given) and be confirmed. Returned in the order of `ids`, duplicates removed.
 * @throws DomainError 404 NOT_FOUND naming `<field>.<index>`, 409 ATTACHMENT_NOT_READY naming it for one not confirmed
 */
export async function requireReadyAttachments(em: EntityManager, ids: string[], field = 'attachment_ids', viewer?: AttachmentViewer): Promise<Attachment[]> {
  const unique = [...new Set(ids)];
  const found = unique.length ? await em.find(AttachmentSchema, { id: { $in: unique }, isActive: true }) : [];
  return unique.map((id) => assertReady(found.find((a) => a.id === id), id, `${field}.${ids.indexOf(id)}`, viewer));
}

/** One attachment a record references (a logo, say), as {@link requireReadyAttachments}, naming `field` itself. */
export async function requireReadyAttachment(em: EntityManager, id: string, field: string, viewer?: AttachmentViewer): Promise<Attachment> {
  return assertReady(await em.findOne(AttachmentSchema, { id, isActive: true }), id, field, viewer);
}

function assertReady(attachment: Attachment | null | undefined, id: string, field: string, viewer: AttachmentViewer | undefined): Attachment {
  if (!attachment || (viewer && !canSee(viewer, attachment))) throw new DomainError(404, 'NOT_FOUND', `Attachment ${id} not found`, field);
  if (attachment.status !== 'ready') {
    throw new DomainError(409, 'ATTACHMENT_NOT_READY', `Attachment ${id} is not confirmed yet: upload it, then POST /attachment/confirm`, field);
  }
  return attachment;
}

function canSee(viewer: AttachmentViewer, attachment: Attachment): boolean {
  return ['admin', 'dispatcher', 'system'].includes(viewer.role) || (viewer.userId !== null && attachment.createdByUserId === viewer.userId);
}

/** `Image/PNG; charset=x` → `image/png`. */
function normalizeType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}
