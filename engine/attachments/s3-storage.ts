import { CopyObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Attachment } from '../../persistence/entities/attachment.entity.ts';
import { DomainError } from '../domain-error.ts';
import type { S3Settings } from './attachment-settings.ts';
import type { AttachmentStorage, StoredObject, UploadTarget } from './attachment-storage.ts';
import { SNIFF_BYTES } from './content-sniffing.ts';

/**
 * An S3-compatible bucket (AWS S3, MinIO, R2, ...): clients upload and download straight to the bucket with
 * SigV4 pre-signed URLs. The upload URL signs the content type and length, so the bucket itself refuses another
 * type or size; confirmation still reads the object's metadata and first bytes.
 *
 * Uploads go to `uploads/<key>`, downloads read `<key>`: confirmation copies the version it checked (by ETag) to the
 * key downloads read, which no upload URL targets. The upload stays (see `seal`), as does an object an upload URL used
 * again before it expires writes: nobody reads them, and a lifecycle rule on `uploads/` clears them.
 */
export class S3AttachmentStorage implements AttachmentStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      credentials: settings.credentials,
      forcePathStyle: settings.forcePathStyle,
      // A checksum computed at signing time would be the empty body's: pre-signed uploads carry none.
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
  }

  async uploadTarget(attachment: Attachment, _site: unknown, expiresAt: Date): Promise<UploadTarget> {
    const command = new PutObjectCommand({ Bucket: this.settings.bucket, Key: uploadKey(attachment), ContentType: attachment.contentType, ContentLength: attachment.size });
    const url = await getSignedUrl(this.client, command, {
      expiresIn: secondsUntil(expiresAt),
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return { url, method: 'PUT', headers: { 'Content-Type': attachment.contentType }, expires_at: expiresAt.toISOString() };
  }

  async downloadUrl(attachment: Attachment, _site: unknown, expiresAt: Date): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.settings.bucket,
      Key: attachment.remotePath,
      ResponseContentType: attachment.contentType,
      ResponseContentDisposition: contentDisposition(attachment.fileName),
    });
    return getSignedUrl(this.client, command, { expiresIn: secondsUntil(expiresAt) });
  }

  async inspect(attachment: Attachment): Promise<StoredObject | null> {
    const Bucket = this.settings.bucket;
    const Key = uploadKey(attachment);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket, Key }));
      const size = head.ContentLength ?? 0;
      const version = head.ETag ?? null;
      // IfMatch: the first bytes come from the version whose size and type were just read.
      const first = size === 0
        ? new Uint8Array()
        : await (await this.client.send(new GetObjectCommand({ Bucket, Key, Range: `bytes=0-${SNIFF_BYTES - 1}`, IfMatch: version ?? undefined }))).Body!.transformToByteArray();
      return { size, contentType: head.ContentType ?? null, head: Buffer.from(first), version };
    } catch (error) {
      if (isStatus(error, 412)) throw uploadChanged(attachment);
      if (isStatus(error, 404) || (error instanceof S3ServiceException && error.name === 'NotFound')) return null;
      throw error;
    }
  }

  async seal(attachment: Attachment, checked: StoredObject): Promise<void> {
    const Bucket = this.settings.bucket;
    const source = `${Bucket}/${uploadKey(attachment).split('/').map(encodeURIComponent).join('/')}`;
    try {
      await this.client.send(new CopyObjectCommand({ Bucket, Key: attachment.remotePath, CopySource: source, CopySourceIfMatch: checked.version ?? undefined }));
    } catch (error) {
      if (isStatus(error, 412)) throw uploadChanged(attachment);
      throw error;
    }
    // The upload is left in place, not deleted: this runs before the confirmation commits, and a confirmation that
    // then fails to commit must find it again when retried. A lifecycle rule on `uploads/` clears it (README).
  }
}

/** Where the upload URL puts the file; confirmation copies it to `remotePath`, the key downloads read. */
export function uploadKey(attachment: Attachment): string {
  return `uploads/${attachment.remotePath}`;
}

function isStatus(error: unknown, status: number): boolean {
  return error instanceof S3ServiceException && error.$metadata.httpStatusCode === status;
}

function uploadChanged(attachment: Attachment): DomainError {
  return DomainError.conflict('UPLOAD_CHANGED', `The upload of attachment ${attachment.id} was replaced while it was checked; confirm again`);
}

/** `attachment; filename*=UTF-8''...`: the client's file name, encoded so it cannot break the header. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replaceAll(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

function secondsUntil(date: Date): number {
  return Math.max(1, Math.ceil((date.getTime() - Date.now()) / 1000));
}
