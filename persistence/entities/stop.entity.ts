import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PersistedEntitySnapshot } from '../../machines/entity-snapshot.ts';
import type { CustomFieldValues } from './custom-field-definition.entity.ts';
import { siteFilter, timestamps } from './columns.ts';

/** An ordered stop of a job (pickup, dropoff, service visit): a persisted actor like its job. */
export const StopSchema = defineEntity({
  name: 'Stop',
  tableName: 'stop',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    jobId: p.string(),
    workflowId: p.string(),
    workflowStateId: p.string(),
    phase: p.string(),
    /** Optimistic lock: every update is `... where version = ?`, and bumps it. */
    version: p.integer().version(),
    snapshot: p.json<PersistedEntitySnapshot>(),
    type: p.string(),
    sortOrder: p.integer(),
    addressId: p.string(),
    completeAfter: p.datetime().nullable(),
    completeBefore: p.datetime().nullable(),
    contactName: p.string().nullable(),
    contactPhone: p.string().nullable(),
    contactPhoneCountry: p.string().nullable(),
    customerNotes: p.text().nullable(),
    driverNotes: p.text().nullable(),
    internalNotes: p.text().nullable(),
    cancellationNotes: p.text().nullable(),
    completedAt: p.datetime().nullable(),
    /** Custom field values by key, validated against the site's definitions (engine/customfields). */
    customFields: p.json<CustomFieldValues>().onCreate(() => ({})),
    ...timestamps(),
  },
});

export type Stop = InferEntity<typeof StopSchema>;
