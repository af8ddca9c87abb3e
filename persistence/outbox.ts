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
    payload: envelope(event),
  };
}

/** The delivery envelope an outbox row carries. */
const envelope = (event: DomainEvent) => ({ event: event.event, timestamp: event.timestamp.toISOString(), data: event.data });

/**
 * Appends an event to the transactional outbox: it commits with the change, and only the relay sends it on.
 * The payload is the delivery envelope `{event, timestamp, data}`.
 */
export function appendOutbox(em: EntityManager, event: DomainEvent): void {
  em.create(OutboxMessageSchema, outboxValues(event));
  withEvents.add(em);
}

/** The entity managers `appendOutbox` wrote to: a transaction that commits one kicks the relay (see `wroteEvents`). */
const withEvents = new WeakSet<EntityManager>();

/**
 * Whether `appendOutbox` wrote an event through this entity manager. Engine commands kick the outbox relay when they
 * commit; a plain transaction that wrote events (a chat message, a payment method) asks this to do the same, so its
 * events leave within milliseconds rather than at the relay's next poll.
 */
export const wroteEvents = (em: EntityManager): boolean => withEvents.has(em);

const AUDIT_COLUMNS = 'id, site_id, user_id, application_id, action, entity_type, entity_id, changes, previous_data, new_data, request_id';
const AUDIT_TYPES = 'id text, site_id text, user_id text, application_id text, action text, entity_type text, entity_id text, changes jsonb, previous_data jsonb, new_data jsonb, request_id text';
const OUTBOX_COLUMNS = 'id, site_id, event, entity_type, entity_id, entity_version, payload';
const OUTBOX_TYPES = 'id text, site_id text, event text, entity_type text, entity_id text, entity_version integer, payload jsonb';

/**
 * The same text whatever the number of rows (so a session prepares it once): the rows travel as two JSON arrays,
 * expanded by `jsonb_to_recordset`, and the outbox rows are inserted in array order (`outbox.seq` follows it).
 * A JSON null becomes an SQL null.
 */
const AUDIT_AND_OUTBOX_SQL = `with audit as (
  insert into audit_record (${AUDIT_COLUMNS}, created_at) select ${AUDIT_COLUMNS}, ?::timestamptz from jsonb_to_recordset(?::jsonb) as r(${AUDIT_TYPES}))
insert into outbox (${OUTBOX_COLUMNS}, created_at)
select ${OUTBOX_COLUMNS}, ?::timestamptz from rows from (jsonb_to_recordset(?::jsonb) as (${OUTBOX_TYPES})) with ordinality as r order by r.ordinality`;

/**
 * Writes audit records and outbox rows in one statement (a data-modifying CTE), outside the unit of work: the
 * command path's bulk equivalent of `recordAudit` + `appendOutbox`. Outbox rows are inserted in the order given
 * (`outbox.seq` follows it), so pass them in event order, after the rows they describe are written.
 */
export async function insertAuditAndOutbox(em: EntityManager, audits: AuditRecordValues[], events: DomainEvent[]): Promise<void> {
  const statement = auditAndOutboxStatement(audits, events);
  if (statement) await em.execute(statement.sql, statement.params, 'run');
}

/**
 * The statement `insertAuditAndOutbox` sends (`?` placeholders and their values; its text is always the same), or
 * null when there is nothing to write.
 */
export function auditAndOutboxStatement(audits: AuditRecordValues[], events: DomainEvent[]): { sql: string; params: unknown[] } | null {
  if (audits.length === 0 && events.length === 0) return null;
  const now = new Date();
  // The rows as `jsonb_to_recordset` reads them (snake_case), built once: no camelCase copy in between.
  const auditRows = audits.map((a) => ({
    id: a.id,
    site_id: a.siteId,
    user_id: a.userId,
    application_id: a.applicationId,
    action: a.action,
    entity_type: a.entityType,
    entity_id: a.entityId,
    changes: a.changes,
    previous_data: a.previousData,
    new_data: a.newData,
    request_id: a.requestId,
  }));
  const outboxRows = events.map((event) => ({
    id: newId('outbox'),
    site_id: event.siteId,
    event: event.event,
    entity_type: event.entityType,
    entity_id: event.entityId,
    entity_version: event.entityVersion,
    payload: envelope(event),
  }));
  return { sql: AUDIT_AND_OUTBOX_SQL, params: [now, JSON.stringify(auditRows), now, JSON.stringify(outboxRows)] };
}
