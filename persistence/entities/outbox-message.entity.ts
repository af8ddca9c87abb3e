import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter } from './columns.ts';

/**
 * A domain event written in the same transaction as the change that caused it (the transactional outbox).
 * The table's `seq` column (an identity, not mapped here) orders rows by insertion. Rows are never updated: an insert
 * also queues the row's `seq` in `outbox_pending` (a trigger, migration 0022), and the relay deletes those entries in
 * the transaction that moves the rows to the durable queue, so a crash after commit loses nothing and a crash before
 * commit emits nothing.
 */
export const OutboxMessageSchema = defineEntity({
  name: 'OutboxMessage',
  tableName: 'outbox',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    event: p.string(),
    entityType: p.string(),
    entityId: p.string(),
    entityVersion: p.integer().nullable(),
    payload: p.json<{ event: string; timestamp: string; data: Record<string, unknown> }>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type OutboxMessage = InferEntity<typeof OutboxMessageSchema>;
