import type { EntityManager } from '@mikro-orm/postgresql';
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

/**
 * Appends an event to the transactional outbox: it commits with the change, and only the relay sends it on.
 * The payload is the delivery envelope `{event, timestamp, data}`.
 */
export function appendOutbox(em: EntityManager, event: DomainEvent): void {
  em.create(OutboxMessageSchema, {
    id: newId('outbox'),
    siteId: event.siteId,
    event: event.event,
    entityType: event.entityType,
    entityId: event.entityId,
    entityVersion: event.entityVersion,
    payload: { event: event.event, timestamp: event.timestamp.toISOString(), data: event.data },
  });
}
