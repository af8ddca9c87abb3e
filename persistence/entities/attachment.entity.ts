import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

export const ATTACHMENT_STATUSES = ['pending', 'ready'] as const;
export type AttachmentStatus = (typeof ATTACHMENT_STATUSES)[number];
export type StorageKind = 'local' | 's3';

/**
 * A file uploaded by a pre-signed URL. `pending` until its upload is confirmed (size and type checked against what
 * was announced), then `ready`: only ready attachments may be linked to jobs, messages or the branding.
 */
export const AttachmentSchema = defineEntity({
  name: 'Attachment',
  tableName: 'attachment',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    createdByUserId: p.string().nullable(),
    fileName: p.string(),
    contentType: p.string(),
    /** Announced size in bytes; confirmation checks the stored object has exactly this size. */
    size: p.integer(),
    purpose: p.string().nullable(),
    storage: p.string().$type<StorageKind>(),
    /** The object's name in storage (random, never the client's file name). */
    storedName: p.string(),
    /** The object's key in its storage: `<site id>/<stored name>`. */
    remotePath: p.string(),
    status: p.string().$type<AttachmentStatus>().default('pending'),
    uploadExpiresAt: p.datetime(),
    confirmedAt: p.datetime().nullable(),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type Attachment = InferEntity<typeof AttachmentSchema>;

/** A ready attachment linked to a job (photos, signatures, documents), and maybe to one of its stops (`stopId`). */
export const JobAttachmentSchema = defineEntity({
  name: 'JobAttachment',
  tableName: 'job_attachment',
  filters: siteFilter,
  properties: {
    jobId: p.string().primary(),
    attachmentId: p.string().primary(),
    siteId: p.string(),
    /** The job's stop it is linked to (a stop's proof of delivery); null: the job as a whole. */
    stopId: p.string().nullable(),
    createdByUserId: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type JobAttachment = InferEntity<typeof JobAttachmentSchema>;
