import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Attachment } from '../../persistence/entities/attachment.entity.ts';
import type { AttachmentSettings } from './attachment-settings.ts';
import type { AttachmentStorage, SiteRef, StoredObject, UploadTarget } from './attachment-storage.ts';
import { SNIFF_BYTES } from './content-sniffing.ts';
import { deriveTransferKey, signTransfer, verifyTransfer, type TransferGrant } from './url-signing.ts';

/** Thrown by {@link LocalAttachmentStorage.receive} when a body outgrows the announced size. */
export class UploadTooLargeError extends Error {}

/** An upload body held in a temporary file: `place` makes it the attachment's file, `discard` removes it if still there. */
export type ReceivedUpload = { size: number; place: () => Promise<void>; discard: () => Promise<void> };

/**
 * The default driver: files on the local disk (`<directory>/<site id>/<stored name>`), uploaded and downloaded
 * through our own server at URLs signed with an HMAC key derived from SECRET_KEY and valid until they expire.
 * For one server, or several sharing a volume.
 */
export class LocalAttachmentStorage implements AttachmentStorage {
  readonly kind = 'local' as const;
  private readonly key: Buffer;

  constructor(
    private readonly settings: AttachmentSettings,
    secretKey: string,
  ) {
    this.key = deriveTransferKey(secretKey);
  }

  async uploadTarget(attachment: Attachment, site: SiteRef, expiresAt: Date): Promise<UploadTarget> {
    const grant = uploadGrant(attachment, Math.floor(expiresAt.getTime() / 1000));
    return {
      url: this.signedUrl(site, `/api/attachment/upload/${attachment.id}`, grant),
      method: 'PUT',
      headers: { 'Content-Type': attachment.contentType },
      expires_at: new Date(grant.expires * 1000).toISOString(),
    };
  }

  async downloadUrl(attachment: Attachment, site: SiteRef, expiresAt: Date): Promise<string> {
    return this.signedUrl(site, `/api/attachment/file/${attachment.id}`, downloadGrant(attachment, Math.floor(expiresAt.getTime() / 1000)));
  }

  async inspect(attachment: Attachment): Promise<StoredObject | null> {
    const file = this.pathOf(attachment);
    const info = await stat(file).catch(() => null);
    if (!info) return null;
    const handle = await open(file, 'r');
    try {
      const head = Buffer.alloc(Math.min(SNIFF_BYTES, info.size));
      await handle.read(head, 0, head.length, 0);
      return { size: info.size, contentType: null, head, version: null };
    } finally {
      await handle.close();
    }
  }

  /**
   * Nothing to move: the file is only ever replaced by {@link ReceivedUpload.place}, which runs while the attachment
   * is pending under its row lock, the lock confirmation holds until the attachment is ready.
   */
  async seal(): Promise<void> {}

  /** Checks a presented upload or download URL's signature and expiry for this attachment. */
  verify(attachment: Attachment, method: 'PUT' | 'GET', expires: number, signature: string, nowMs: number): 'ok' | 'invalid' | 'expired' {
    const grant = method === 'PUT' ? uploadGrant(attachment, expires) : downloadGrant(attachment, expires);
    return verifyTransfer(this.key, grant, signature, nowMs);
  }

  /**
   * Receives an upload body into a temporary file beside the attachment's, refusing more than `attachment.size`
   * bytes. Nothing replaces the stored file until the caller places it (under the attachment's lock, once it knows
   * the attachment is still pending), so neither a broken upload nor one that ends after confirmation changes it.
   * @throws UploadTooLargeError
   */
  async receive(attachment: Attachment, body: Readable): Promise<ReceivedUpload> {
    const file = this.pathOf(attachment);
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${randomBytes(6).toString('hex')}.part`;
    let written = 0;
    const limit = attachment.size;
    const discard = () => rm(temporary, { force: true });
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            written += chunk.length;
            if (written > limit) throw new UploadTooLargeError(`The upload exceeds the announced ${limit} bytes`);
            yield chunk;
          }
        },
        createWriteStream(temporary),
      );
    } catch (error) {
      await discard();
      throw error;
    }
    return { size: written, place: () => rename(temporary, file), discard };
  }

  read(attachment: Attachment): Readable {
    return createReadStream(this.pathOf(attachment));
  }

  private pathOf(attachment: Attachment): string {
    return path.join(this.settings.directory, attachment.siteId, attachment.storedName);
  }

  private signedUrl(site: SiteRef, pathname: string, grant: TransferGrant): string {
    const origin = this.settings.publicUrl.replace('{site}', site.subdomain);
    return `${origin}${pathname}?expires=${grant.expires}&signature=${signTransfer(this.key, grant)}`;
  }
}

function uploadGrant(a: Attachment, expires: number): TransferGrant {
  return { method: 'PUT', siteId: a.siteId, attachmentId: a.id, expires, contentType: a.contentType, size: a.size };
}

function downloadGrant(a: Attachment, expires: number): TransferGrant {
  return { method: 'GET', siteId: a.siteId, attachmentId: a.id, expires };
}
