import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AttachmentSchema, type Attachment } from '../../persistence/entities/attachment.entity.ts';
import { DomainError } from '../domain-error.ts';

/**
 * Reads an attachment locked (`FOR UPDATE`) until the transaction ends. Confirmation holds this lock while it checks
 * the stored file and marks it ready, and an upload takes it to put its file in place: so an upload either lands
 * before the check (and is what gets checked) or finds the attachment ready and is refused.
 * @returns null when absent or another site's
 */
export function lockAttachment(em: EntityManager, id: string): Promise<Attachment | null> {
  return em.findOne(AttachmentSchema, { id, isActive: true }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/**
 * Runs `place` (the step that makes an upload the stored file) only while the attachment is still pending, under
 * {@link lockAttachment}. Call it inside a transaction.
 * @throws DomainError 409 ATTACHMENT_ALREADY_CONFIRMED (also for an attachment removed meanwhile)
 */
export async function placeUploadWhilePending(em: EntityManager, id: string, place: () => Promise<void>): Promise<void> {
  const attachment = await lockAttachment(em, id);
  if (attachment?.status !== 'pending') throw alreadyConfirmed(id);
  await place();
}

export function alreadyConfirmed(id: string): DomainError {
  return DomainError.conflict('ATTACHMENT_ALREADY_CONFIRMED', `Attachment ${id} is already confirmed; its file can no longer change`);
}
