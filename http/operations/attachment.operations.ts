import { Type } from 'typebox';
import type { Services } from '../../app/services.ts';
import { confirmAttachment, getAttachment, presignUpload, type AttachmentDeps } from '../../engine/attachments/attachment.service.ts';
import { attachToJob, jobAttachments, type LinkedAttachment } from '../../engine/attachments/job-attachments.ts';
import { DomainError } from '../../engine/domain-error.ts';
import type { Attachment } from '../../persistence/entities/attachment.entity.ts';
import type { Site } from '../../persistence/entities/site.entity.ts';
import { defineOperation } from '../operation.ts';
import {
  AttachmentResponse,
  ConfirmBody,
  JobAttachmentsBody,
  JobAttachmentsResponse,
  PresignBody,
  PresignResponse,
  toAttachmentResponse,
} from '../schemas/attachment.schema.ts';
import { DataResponse, Id, IdQuery } from '../schemas/common.schema.ts';
import { requireSite } from '../tenancy.ts';
import { commandContext } from './command-context.ts';

const TAG = 'Attachments';

export const attachmentOperations = [
  defineOperation({
    id: 'attachment.presign',
    method: 'POST',
    path: '/attachment/presign',
    summary: 'Start an upload: returns attachment_id and a signed, expiring upload {url, method, headers, expires_at}',
    description: 'PUT the file to upload.url with upload.headers, then POST /attachment/confirm. Limits: ATTACHMENT_MAX_BYTES, ATTACHMENT_ALLOWED_TYPES.',
    tag: TAG,
    access: 'attachment.write',
    host: 'site',
    body: PresignBody,
    status: 201,
    response: DataResponse(PresignResponse),
    handler: async (ctx) => {
      const { body } = ctx;
      if (body.size !== undefined && body.size_bytes !== undefined && body.size !== body.size_bytes) {
        throw DomainError.invalid('SIZE_CONFLICT', 'size and size_bytes differ', 'size_bytes');
      }
      const size = body.size ?? body.size_bytes;
      if (size === undefined) throw DomainError.invalid('SIZE_REQUIRED', 'size (bytes) is required', 'size');
      const site = requireSite(ctx.site);
      const { attachment, upload } = await ctx.transaction((em) =>
        presignUpload(em, deps(ctx.services), ctx.actor, site, { file_name: body.file_name, content_type: body.content_type, size, purpose: body.purpose }),
      );
      return { data: { attachment_id: attachment.id, upload } };
    },
  }),
  defineOperation({
    id: 'attachment.confirm',
    method: 'POST',
    path: '/attachment/confirm',
    summary: 'Confirm an upload: checks the stored size and content type, then marks the attachment ready',
    tag: TAG,
    access: 'attachment.write',
    host: 'site',
    body: ConfirmBody,
    response: DataResponse(AttachmentResponse),
    handler: async (ctx) => {
      const { actor } = commandContext(ctx);
      const attachment = await ctx.transaction((em) => confirmAttachment(em, deps(ctx.services), ctx.actor, actor, ctx.body.attachment_id));
      return { data: await present(ctx.services, requireSite(ctx.site), attachment) };
    },
  }),
  defineOperation({
    id: 'attachment.get',
    method: 'GET',
    path: '/attachment',
    summary: 'Get an attachment; a ready one carries a signed, expiring download URL (remote_url)',
    tag: TAG,
    access: 'attachment.read',
    host: 'site',
    query: IdQuery,
    response: DataResponse(AttachmentResponse),
    handler: async (ctx) => {
      const { actor } = commandContext(ctx);
      const attachment = await ctx.transaction((em) => getAttachment(em, actor, ctx.query.id));
      return { data: await present(ctx.services, requireSite(ctx.site), attachment) };
    },
  }),
  defineOperation({
    id: 'job.attachments.add',
    method: 'POST',
    path: '/job/attachments',
    summary: 'Attach confirmed (ready) attachments to a job, or to one of its stops (stop_id)',
    description:
      "A stop move that requires an attachment needs a ready one linked to that stop (stop_id) or to the whole job (no stop_id), uploaded by staff or a driver; a job's move, any ready one linked to the job. " +
      'Linking one again changes nothing, except that a link to the job as a whole may be narrowed to a stop (one linked to another stop: 409 ATTACHMENT_ON_ANOTHER_STOP).',
    tag: TAG,
    access: 'attachment.write',
    host: 'site',
    body: JobAttachmentsBody,
    response: DataResponse(JobAttachmentsResponse),
    handler: async (ctx) => {
      const { siteId, actor } = commandContext(ctx);
      const { job_id: jobId, attachment_ids: attachmentIds, stop_id: stopId } = ctx.body;
      const attachments = await ctx.transaction((em) => attachToJob(em, actor, siteId, jobId, attachmentIds, stopId));
      return { data: { job_id: jobId, attachments: await presentLinks(ctx.services, requireSite(ctx.site), attachments) } };
    },
  }),
  defineOperation({
    id: 'job.attachments.list',
    method: 'GET',
    path: '/job/attachments',
    summary: "A job's attachments, with signed download URLs",
    tag: TAG,
    access: 'attachment.read',
    host: 'site',
    query: Type.Object({ job_id: Id }, { additionalProperties: false }),
    response: DataResponse(JobAttachmentsResponse),
    handler: async (ctx) => {
      const { actor } = commandContext(ctx);
      const attachments = await ctx.transaction((em) => jobAttachments(em, actor, ctx.query.job_id));
      return { data: { job_id: ctx.query.job_id, attachments: await presentLinks(ctx.services, requireSite(ctx.site), attachments) } };
    },
  }),
];

function deps(services: Services): AttachmentDeps {
  return { storage: services.attachments, settings: services.config.attachments, now: services.clock.now() };
}

/** An attachment with a fresh signed download URL when it is ready. */
export async function present(services: Services, site: Site, attachment: Attachment) {
  if (attachment.status !== 'ready') return toAttachmentResponse(attachment, null);
  const expiresAt = new Date(services.clock.now().getTime() + services.config.attachments.urlTtlSeconds * 1000);
  return toAttachmentResponse(attachment, { url: await services.attachments.downloadUrl(attachment, site, expiresAt), expiresAt });
}

/** A job's attachments, each with the stop it is linked to. */
function presentLinks(services: Services, site: Site, links: LinkedAttachment[]) {
  return Promise.all(links.map(async ({ attachment, stopId }) => ({ ...(await present(services, site, attachment)), stop_id: stopId })));
}
