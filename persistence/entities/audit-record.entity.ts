import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter } from './columns.ts';

/** Append-only: the database rejects UPDATE, DELETE and TRUNCATE on this table. `siteId` null = platform scope. */
export const AuditRecordSchema = defineEntity({
  name: 'AuditRecord',
  tableName: 'audit_record',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string().nullable(),
    userId: p.string().nullable(),
    applicationId: p.string().nullable(),
    action: p.string(),
    entityType: p.string(),
    entityId: p.string(),
    /** Null: not stored, the diff of `previousData` and `newData` (see `AuditEntry.changesFromData`). */
    changes: p.json<Record<string, unknown>>().nullable(),
    previousData: p.json<Record<string, unknown>>().nullable(),
    newData: p.json<Record<string, unknown>>().nullable(),
    requestId: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type AuditRecord = InferEntity<typeof AuditRecordSchema>;
