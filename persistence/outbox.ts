import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuditRecordValues } from './audit.ts';
import { OutboxMessageSchema } from './entities/outbox-message.entity.ts';
import { newId } from './ids.ts';

export type DomainEvent = {
  siteId: string;
  /** lowercase `entity:action`, e.g. `job:state_change` */
  event: string;
  entityType: string;
  entityId: string;
  entityVersion: number | null;
  data: Record<string, unknown>;
  timestamp: Date;
};

/** An outbox row's column values (camelCase) for `event`, with a new id. The payload is the delivery envelope `{event, timestamp, data}`. */
export function outboxValues(event: DomainEvent) {
  return {
    id: newId('outbox'),
    siteId: event.siteId,
    event: event.event,
    entityType: event.entityType,
    entityId: event.entityId,
    entityVersion: event.entityVersion,
    payload: { event: event.event, timestamp: event.timestamp.toISOString(), data: event.data },
  };
}

/**
 * Appends an event to the transactional outbox: it commits with the change, and only the relay sends it on.
 * The payload is the delivery envelope `{event, timestamp, data}`.
 */
export function appendOutbox(em: EntityManager, event: DomainEvent): void {
  em.create(OutboxMessageSchema, outboxValues(event));
}

const AUDIT_COLUMNS = 'id, site_id, user_id, application_id, action, entity_type, entity_id, changes, previous_data, new_data, request_id, created_at';
const OUTBOX_COLUMNS = 'id, site_id, event, entity_type, entity_id, entity_version, payload, created_at';
/** `(?, ?, ...), (?, ?, ...)`: `count` rows of `width` placeholders. */
const rows = (count: number, width: number): string =>
  Array.from({ length: count }, () => `(${Array.from({ length: width }, () => '?').join(', ')})`).join(', ');
const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * Writes audit records and outbox rows in one statement (a data-modifying CTE, one multi-row INSERT each), outside
 * the unit of work: the command path's bulk equivalent of `recordAudit` + `appendOutbox`. Outbox rows are inserted
 * in the order given (`outbox.seq` follows it), so pass them in event order, after the rows they describe are written.
 */
export async function insertAuditAndOutbox(em: EntityManager, audits: AuditRecordValues[], events: DomainEvent[]): Promise<void> {
  const statement = auditAndOutboxStatement(audits, events);
  if (statement) await em.execute(statement.sql, statement.params, 'run');
}

/** The statement `insertAuditAndOutbox` sends (`?` placeholders and their values), or null when there is nothing to write. */
export function auditAndOutboxStatement(audits: AuditRecordValues[], events: DomainEvent[]): { sql: string; params: unknown[] } | null {
  if (audits.length === 0 && events.length === 0) return null;
  const now = new Date();
  const params: unknown[] = [];
  for (const a of audits) {
    params.push(a.id, a.siteId, a.userId, a.applicationId, a.action, a.entityType, a.entityId, json(a.changes), json(a.previousData), json(a.newData), a.requestId, now);
  }
  for (const event of events) {
    const o = outboxValues(event);
    params.push(o.id, o.siteId, o.event, o.entityType, o.entityId, o.entityVersion, json(o.payload), now);
  }
  const auditInsert = `insert into audit_record (${AUDIT_COLUMNS}) values ${rows(audits.length, 12)}`;
  const outboxInsert = `insert into outbox (${OUTBOX_COLUMNS}) values ${rows(events.length, 8)}`;
  const sql =
    audits.length === 0 ? outboxInsert : events.length === 0 ? auditInsert : `with audit as (${auditInsert}) ${outboxInsert}`;
  return { sql, params };
}
