import type { Attachment, StorageKind } from '../../persistence/entities/attachment.entity.ts';
import type { AttachmentSettings } from './attachment-settings.ts';
import { LocalAttachmentStorage } from './local-storage.ts';
import { S3AttachmentStorage } from './s3-storage.ts';

/** Where and how a client sends a file: the presign response's `upload`. */
export type UploadTarget = { url: string; method: 'PUT'; headers: Record<string, string>; expires_at: string };

/**
 * What storage holds for an attachment's upload: its size, the content type it was stored with (if kept), first
 * bytes, and the version they were read from (an S3 ETag; null where the driver has none).
 */
export type StoredObject = { size: number; contentType: string | null; head: Buffer; version: string | null };

/** The site part of a signed URL (the local driver serves each site on its own host). */
export type SiteRef = { id: string; subdomain: string };

/** A storage driver: hands out signed upload and download URLs, and reports what was uploaded. */
export interface AttachmentStorage {
  readonly kind: StorageKind;
  uploadTarget(attachment: Attachment, site: SiteRef, expiresAt: Date): Promise<UploadTarget>;
  downloadUrl(attachment: Attachment, site: SiteRef, expiresAt: Date): Promise<string>;
  /** @returns null when nothing was uploaded */
  inspect(attachment: Attachment): Promise<StoredObject | null>;
  /**
   * Makes the upload `inspect` read (exactly that version) the file downloads serve, out of reach of the upload
   * URL, which stays valid until it expires. Called by confirmation, under the attachment's row lock.
   * @throws DomainError 409 UPLOAD_CHANGED when the upload was replaced since it was inspected
   */
  seal(attachment: Attachment, checked: StoredObject): Promise<void>;
}

/** The configured driver: the local disk behind our own signed URLs, or an S3-compatible bucket. */
export function createAttachmentStorage(settings: AttachmentSettings, secretKey: string): AttachmentStorage {
  return settings.s3 ? new S3AttachmentStorage(settings.s3) : new LocalAttachmentStorage(settings, secretKey);
}
