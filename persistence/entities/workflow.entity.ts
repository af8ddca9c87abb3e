import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { WorkflowState, WorkflowTransitionValue } from '../../machines/workflow.schema.ts';
import { siteFilter } from './columns.ts';

/** One immutable version of a site's workflow for one entity type; `isCurrent` marks the one new entities use. */
export const WorkflowSchema = defineEntity({
  name: 'Workflow',
  tableName: 'workflow',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    entityType: p.string(),
    version: p.integer(),
    isCurrent: p.boolean(),
    states: p.json<WorkflowState[]>(),
    transitions: p.json<WorkflowTransitionValue[]>(),
    createdByUserId: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type WorkflowRow = InferEntity<typeof WorkflowSchema>;
