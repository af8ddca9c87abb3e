import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import type { H3, H3Event } from 'h3';
import type { Services } from '../app/services.ts';
import { LocalAttachmentStorage, UploadTooLargeError } from '../engine/attachments/local-storage.ts';
import { contentDisposition } from '../engine/attachments/s3-storage.ts';
import { AttachmentSchema, type Attachment } from '../persistence/entities/attachment.entity.ts';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import { ApiError, toApiError } from './errors.ts';
import { parseHost } from './tenancy.ts';

/**
 * The local storage driver's transfer endpoints, outside the JSON operations since their bodies are files:
 * `PUT /api/attachment/upload/{id}` and `GET /api/attachment/file/{id}`, each authorized by the signed URL alone
 * (`expires` + `signature`, HMAC over the method, site, attachment, expiry and, for uploads, type and size), as a
 * cloud bucket's pre-signed URLs are. A tampered URL is 403 INVALID_SIGNATURE, an expired one 403 URL_EXPIRED.
 */
export function mountAttachmentTransfer(app: H3, services: Services): void {
  const storage = services.attachments;
  if (!(storage instanceof LocalAttachmentStorage)) return;
  app.put('/api/attachment/upload/:id', (event) => respond(services, event, () => upload(services, storage, event)));
  app.get('/api/attachment/file/:id', (event) => respond(services, event, () => download(services, storage, event)));
}

async function upload(services: Services, storage: LocalAttachmentStorage, event: H3Event): Promise<unknown> {
  const attachment = await authorize(services, storage, event, 'PUT');
  if (attachment.status !== 'pending') throw ApiError.conflict('ATTACHMENT_ALREADY_CONFIRMED', `Attachment ${attachment.id} is already confirmed`);
  const contentType = (event.req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== attachment.contentType) {
    throw ApiError.badRequest('CONTENT_TYPE_MISMATCH', `Send the file with Content-Type: ${attachment.contentType}`, [{ field: 'content-type', message: 'differs from the presigned type' }]);
  }
  if (Number(event.req.headers.get('content-length') ?? 0) > attachment.size) throw tooLarge(attachment);
  const body = event.runtime?.node?.req ?? (event.req.body ? Readable.fromWeb(event.req.body as unknown as NodeWebStream) : Readable.from([]));
  try {
    const size = await storage.write(attachment, body);
    return { data: { attachment_id: attachment.id, size } };
  } catch (error) {
    if (error instanceof UploadTooLargeError) throw tooLarge(attachment);
    throw error;
  }
}

async function download(services: Services, storage: LocalAttachmentStorage, event: H3Event): Promise<Response> {
  const attachment = await authorize(services, storage, event, 'GET');
  if (attachment.status !== 'ready') throw ApiError.conflict('ATTACHMENT_NOT_READY', `Attachment ${attachment.id} is not confirmed`);
  const stream = Readable.toWeb(storage.read(attachment)) as unknown as ReadableStream;
  return new Response(stream, {
    headers: {
      'content-type': attachment.contentType,
      'content-length': String(attachment.size),
      'content-disposition': contentDisposition(attachment.fileName),
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, no-store',
    },
  });
}

/** The attachment a signed URL names, after checking the host's site, the signature and the expiry. */
async function authorize(services: Services, storage: LocalAttachmentStorage, event: H3Event, method: 'PUT' | 'GET'): Promise<Attachment> {
  const forwarded = services.config.trustProxy ? event.req.headers.get('x-forwarded-host') : null;
  const target = parseHost(forwarded ?? event.req.headers.get('host'), services.config.baseDomain);
  if (target.kind !== 'site') throw ApiError.badRequest('SITE_HOST_REQUIRED', 'Attachment URLs are served on a site host');
  const now = services.clock.now().getTime();
  const site = await services.sites.resolve(target.subdomain);
  const id = event.context.params?.id ?? '';
  const attachment = await inTenantScope(services.db.orm, { siteId: site.id }, (em) => em.findOne(AttachmentSchema, { id, isActive: true }));
  const expires = Number(event.url.searchParams.get('expires'));
  const signature = event.url.searchParams.get('signature') ?? '';
  const verdict = attachment ? storage.verify(attachment, method, expires, signature, now) : 'invalid';
  // An unknown id and a bad signature answer alike, so URLs cannot be probed for existing attachments.
  if (!attachment || verdict === 'invalid') throw new ApiError(403, 'INVALID_SIGNATURE', 'The URL signature is invalid');
  if (verdict === 'expired') throw new ApiError(403, 'URL_EXPIRED', 'The URL has expired; request a new one');
  return attachment;
}

/** Runs a transfer, rendering failures as `{error, code}`; logs like an operation, without the query (the signature). */
async function respond(services: Services, event: H3Event, work: () => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  let status = 200;
  try {
    return await work();
  } catch (thrown) {
    const error = toApiError(thrown);
    if (error.status >= 500) services.logger.error({ err: thrown instanceof Error ? thrown.message : String(thrown), path: event.url.pathname }, 'attachment transfer failed');
    status = error.status;
    event.res.status = status;
    return error.toBody();
  } finally {
    services.logger.info({ op: 'attachment.transfer', method: event.req.method, path: event.url.pathname, status, ms: Math.round((performance.now() - started) * 10) / 10 });
  }
}

function tooLarge(attachment: Attachment): ApiError {
  return new ApiError(413, 'UPLOAD_TOO_LARGE', `The upload exceeds the announced ${attachment.size} bytes`);
}
