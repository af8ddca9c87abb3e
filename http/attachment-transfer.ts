import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import type { H3, H3Event } from 'h3';
import type { Services } from '../app/services.ts';
import { alreadyConfirmed, placeUploadWhilePending } from '../engine/attachments/attachment-lock.ts';
import { LocalAttachmentStorage, UploadTooLargeError } from '../engine/attachments/local-storage.ts';
import { contentDisposition } from '../engine/attachments/s3-storage.ts';
import { AttachmentSchema, type Attachment } from '../persistence/entities/attachment.entity.ts';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import { ApiError, toApiError } from './errors.ts';
import { readRequestId } from './request-input.ts';
import { JSON_CONTENT_TYPE } from './run-operation.ts';
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

async function upload(services: Services, storage: LocalAttachmentStorage, event: H3Event): Promise<object> {
  const attachment = await authorize(services, storage, event, 'PUT');
  // Checked again, under the attachment's lock, before the received file replaces the stored one.
  if (attachment.status !== 'pending') throw alreadyConfirmed(attachment.id);
  const contentType = (event.req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== attachment.contentType) {
    throw ApiError.badRequest('CONTENT_TYPE_MISMATCH', `Send the file with Content-Type: ${attachment.contentType}`, [{ field: 'content-type', message: 'differs from the presigned type' }]);
  }
  if (Number(event.req.headers.get('content-length') ?? 0) > attachment.size) throw tooLarge(attachment);
  const body = event.runtime?.node?.req ?? (event.req.body ? Readable.fromWeb(event.req.body as unknown as NodeWebStream) : Readable.from([]));
  const received = await storage.receive(attachment, body).catch((error: unknown) => {
    throw error instanceof UploadTooLargeError ? tooLarge(attachment) : error;
  });
  try {
    await inTenantScope(services.db.orm, { siteId: attachment.siteId }, (em) => placeUploadWhilePending(em, attachment.id, received.place));
  } finally {
    await received.discard();
  }
  return { data: { attachment_id: attachment.id, size: received.size } };
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

/**
 * Runs a transfer and answers with its file or `{data}`, or a failure as `{error, code}`, each with `x-request-id`
 * as every API response has; logs like an operation, without the query (the signature).
 */
async function respond(services: Services, event: H3Event, work: () => Promise<Response | object>): Promise<Response> {
  const started = performance.now();
  const requestId = readRequestId(event.req.headers, randomUUID);
  let status = 200;
  try {
    const result = await work();
    if (!(result instanceof Response)) return json(status, result, requestId);
    result.headers.set('x-request-id', requestId);
    return result;
  } catch (thrown) {
    const error = toApiError(thrown);
    if (error.status >= 500) services.logger.error({ err: thrown instanceof Error ? thrown.message : String(thrown), req_id: requestId, path: event.url.pathname }, 'attachment transfer failed');
    status = error.status;
    return json(status, error.toBody(), requestId);
  } finally {
    services.logger.info({ req_id: requestId, op: 'attachment.transfer', method: event.req.method, path: event.url.pathname, status, ms: Math.round((performance.now() - started) * 10) / 10 });
  }
}

function json(status: number, body: object, requestId: string): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': JSON_CONTENT_TYPE, 'x-request-id': requestId } });
}

function tooLarge(attachment: Attachment): ApiError {
  return new ApiError(413, 'UPLOAD_TOO_LARGE', `The upload exceeds the announced ${attachment.size} bytes`);
}
