import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { CustomFieldValues } from './custom-field-definition.entity.ts';
import { siteFilter, timestamps } from './columns.ts';

export const OPERATIONAL_STATUSES = ['active', 'inactive', 'suspended'] as const;
export type OperationalStatus = (typeof OPERATIONAL_STATUSES)[number];

/**
 * A driver's dispatch details on one site, keyed by (site, user). `operationalStatus` is the office's decision
 * (may this person be dispatched at all); live availability (online, busy, on break) belongs to the driver actor.
 */
export const WorkerSchema = defineEntity({
  name: 'Worker',
  tableName: 'worker',
  filters: siteFilter,
  properties: {
    siteId: p.string().primary(),
    userId: p.string().primary(),
    defaultVehicleId: p.string().nullable(),
    teamIds: p.json<string[]>(),
    zoneIds: p.json<string[]>(),
    skills: p.json<string[]>(),
    operationalStatus: p.string().$type<OperationalStatus>().default('active'),
    /** Most open jobs (phase assigned or in progress) the worker holds at once, each counting 1; null: no cap. Dispatch refuses past it. */
    maxLoad: p.integer().nullable(),
    notes: p.text().nullable(),
    /** Custom field values by key, validated against the site's definitions (engine/customfields). */
    customFields: p.json<CustomFieldValues>().onCreate(() => ({})),
    ...timestamps(),
  },
});

export type Worker = InferEntity<typeof WorkerSchema>;
