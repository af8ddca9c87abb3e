import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PersistedEntitySnapshot } from '../../machines/entity-snapshot.ts';
import type { CustomFieldValues } from './custom-field-definition.entity.ts';
import { siteFilter, timestamps } from './columns.ts';

/**
 * A job: a persisted actor. `workflowStateId`, `phase` and `snapshot` change only through the engine's command
 * path, which bumps `version` with an optimistic check.
 */
export const JobSchema = defineEntity({
  name: 'Job',
  tableName: 'job',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    workflowId: p.string(),
    workflowStateId: p.string(),
    phase: p.string(),
    /** Optimistic lock: every update is `... where version = ?`, and bumps it. */
    version: p.integer().version(),
    snapshot: p.json<PersistedEntitySnapshot>(),
    customerUserId: p.string().nullable(),
    serviceTypeId: p.string().nullable(),
    optionIds: p.json<string[]>(),
    estimateId: p.string().nullable(),
    driverUserId: p.string().nullable(),
    routeId: p.string().nullable(),
    customerNotes: p.text().nullable(),
    driverNotes: p.text().nullable(),
    internalNotes: p.text().nullable(),
    paymentMethod: p.string().nullable(),
    zoneOverride: p.boolean().default(false),
    cancellationNotes: p.text().nullable(),
    createdByUserId: p.string().nullable(),
    completedAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
    deletedAt: p.datetime().nullable(),
    /** Custom field values by key, validated against the site's definitions (engine/customfields). */
    customFields: p.json<CustomFieldValues>().onCreate(() => ({})),
    ...timestamps(),
  },
});

export type Job = InferEntity<typeof JobSchema>;
