import { Type } from 'typebox';
import type { Attachment } from '../../persistence/entities/attachment.entity.ts';
import { Id, Nullable, Timestamp } from './common.schema.ts';

const Size = Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'bytes' });

export const PresignBody = Type.Object(
  {
    file_name: Type.String({ minLength: 1, maxLength: 255 }),
    content_type: Type.String({ minLength: 3, maxLength: 127, pattern: '^[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+$' }),
    size: Type.Optional(Size),
    size_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'alias of size' })),
    purpose: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'free-form, e.g. proof_of_delivery, logo, chat' })),
  },
  { additionalProperties: false, description: 'the file to upload: its name, content type and exact size (size or size_bytes)' },
);

export const UploadTargetSchema = Type.Object(
  {
    url: Type.String({ description: 'send the file body here' }),
    method: Type.Literal('PUT'),
    headers: Type.Record(Type.String(), Type.String(), { description: 'headers the upload must carry' }),
    expires_at: Timestamp,
  },
  { additionalProperties: false },
);

export const PresignResponse = Type.Object({ attachment_id: Id, upload: UploadTargetSchema }, { additionalProperties: false });

export const ConfirmBody = Type.Object({ attachment_id: Id }, { additionalProperties: false });

export const AttachmentResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    created_by_user_id: Nullable(Type.String()),
    file_name: Type.String(),
    content_type: Type.String(),
    size: Type.Integer(),
    purpose: Nullable(Type.String()),
    status: Type.Union([Type.Literal('pending'), Type.Literal('ready')], { description: 'pending until confirmed' }),
    storage: Type.String({ description: 'local or s3' }),
    stored_name: Type.String(),
    remote_path: Type.String(),
    remote_url: Nullable(Type.String({ description: 'a signed download URL (ready attachments only)' })),
    remote_url_expires_at: Nullable(Timestamp),
    is_active: Type.Boolean(),
    confirmed_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const JobAttachmentsBody = Type.Object(
  {
    job_id: Id,
    attachment_ids: Type.Array(Id, { minItems: 1, maxItems: 50 }),
    stop_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'link them to this stop of the job (absent: the job as a whole). A stop move that requires an attachment needs one linked to that stop or to the whole job, uploaded by staff or a driver; one linked to another stop does not count',
      }),
    ),
  },
  { additionalProperties: false },
);

const JobAttachmentResponse = Type.Object(
  { ...AttachmentResponse.properties, stop_id: Nullable(Type.String({ description: 'the stop of the job it is linked to; null: the job as a whole' })) },
  { additionalProperties: false },
);

export const JobAttachmentsResponse = Type.Object({ job_id: Id, attachments: Type.Array(JobAttachmentResponse) }, { additionalProperties: false });

/** An attachment as the API shows it; `download` is a signed URL and its expiry, for ready attachments. */
export function toAttachmentResponse(a: Attachment, download: { url: string; expiresAt: Date } | null) {
  return {
    id: a.id,
    site_id: a.siteId,
    created_by_user_id: a.createdByUserId ?? null,
    file_name: a.fileName,
    content_type: a.contentType,
    size: a.size,
    purpose: a.purpose ?? null,
    status: a.status,
    storage: a.storage,
    stored_name: a.storedName,
    remote_path: a.remotePath,
    remote_url: download?.url ?? null,
    remote_url_expires_at: download ? download.expiresAt.toISOString() : null,
    is_active: a.isActive,
    confirmed_at: a.confirmedAt ? a.confirmedAt.toISOString() : null,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}
