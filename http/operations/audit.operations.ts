import { Type } from 'typebox';
import { auditChanges } from '../../persistence/audit.ts';
import { AuditRecordSchema, type AuditRecord } from '../../persistence/entities/audit-record.entity.ts';
import { defineOperation } from '../operation.ts';
import { pagingQuery, readPaging, searchBody, SearchResponse } from '../pagination.ts';
import { Id, Nullable, Timestamp } from '../schemas/common.schema.ts';

const SORTABLE = { created_at: 'createdAt', id: 'id' };

const SearchQuery = Type.Object(
  {
    entity_type: Type.Optional(Type.String({ maxLength: 64, description: 'e.g. User, Site, Application' })),
    entity_id: Type.Optional(Id),
    user_id: Type.Optional(Id),
    action: Type.Optional(Type.String({ maxLength: 64, description: 'create, update, delete, ...' })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'created before' })),
    ...pagingQuery(SORTABLE),
  },
  { additionalProperties: false },
);

const Json = Type.Record(Type.String(), Type.Unknown());

const AuditRecordResponse = Type.Object(
  {
    id: Id,
    site_id: Nullable(Type.String({ description: 'null for platform records' })),
    user_id: Nullable(Type.String()),
    application_id: Nullable(Type.String()),
    action: Type.String(),
    entity_type: Type.String(),
    entity_id: Type.String(),
    changes: Json,
    previous_data: Nullable(Json),
    new_data: Nullable(Json),
    request_id: Nullable(Type.String()),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

function toAuditRecordResponse(r: AuditRecord) {
  return {
    id: r.id,
    site_id: r.siteId ?? null,
    user_id: r.userId ?? null,
    application_id: r.applicationId ?? null,
    action: r.action,
    entity_type: r.entityType,
    entity_id: r.entityId,
    changes: auditChanges(r),
    previous_data: r.previousData ?? null,
    new_data: r.newData ?? null,
    request_id: r.requestId ?? null,
    is_active: true,
    created_at: r.createdAt.toISOString(),
    updated_at: r.createdAt.toISOString(),
  };
}

export const auditOperations = [
  defineOperation({
    id: 'audit.search',
    method: 'GET',
    path: '/audit/search',
    summary: 'Search the append-only audit log (on the platform host: platform records)',
    tag: 'Audit',
    access: 'audit.read',
    host: 'any',
    query: SearchQuery,
    response: SearchResponse(AuditRecordResponse),
    handler: async ({ query, site, transaction }) => {
      const paging = readPaging(query, SORTABLE, '-created_at');
      const created = { ...(query.from ? { $gte: new Date(query.from) } : {}), ...(query.to ? { $lt: new Date(query.to) } : {}) };
      const [rows, total] = await transaction((em) =>
        em.findAndCount(
          AuditRecordSchema,
          {
            siteId: site?.id ?? null,
            ...(query.entity_type ? { entityType: query.entity_type } : {}),
            ...(query.entity_id ? { entityId: query.entity_id } : {}),
            ...(query.user_id ? { userId: query.user_id } : {}),
            ...(query.action ? { action: query.action } : {}),
            ...(query.from || query.to ? { createdAt: created } : {}),
          },
          { limit: paging.perPage, offset: paging.offset, orderBy: paging.orderBy },
        ),
      );
      return searchBody(rows.map(toAuditRecordResponse), total, paging);
    },
  }),
];
