import { DomainError } from '../domain-error.ts';

/**
 * Every event a subscription can ask for, `entity:action` in lowercase as the spec names them, and the only ones
 * webhooks carry (`*` too): `chat:message` is written to the outbox for the participants' sockets and never leaves
 * by webhook, as a room is private to its participants.
 */
export const WEBHOOK_EVENTS = [
  'job:create',
  'job:state_change',
  'job:delete',
  'stop:state_change',
  'route:create',
  'route:update',
  'route:state_change',
  'dispatch:created',
  'dispatch:updated',
  'driver:status_change',
  'payment_method:create',
  'payment_method:update',
  'payment_method:delete',
  'webhook:ping',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

const KNOWN_EVENTS: ReadonlySet<string> = new Set(WEBHOOK_EVENTS);
const KNOWN_ENTITIES: ReadonlySet<string> = new Set(WEBHOOK_EVENTS.map((e) => e.split(':')[0]!));
const FILTER_SHAPE = /^(\*|[a-z][a-z_]*:(\*|[a-z][a-z_]*))$/;

/**
 * Checks a subscription's event filters: exact names (`job:create`), one entity's events (`job:*`) or every event
 * (`*`, which also takes events added later). Duplicates are dropped, order kept.
 * @throws DomainError 400 INVALID_WEBHOOK_EVENT naming the offending entry (`events.<index>`)
 */
export function parseEventFilters(filters: readonly string[]): string[] {
  filters.forEach((filter, index) => {
    const field = `events.${index}`;
    if (!FILTER_SHAPE.test(filter)) {
      throw DomainError.invalid('INVALID_WEBHOOK_EVENT', `Event filter ${JSON.stringify(filter)} is not entity:action, entity:* or *`, field);
    }
    const [entity, action] = filter.split(':');
    const known = filter === '*' || (action === '*' ? KNOWN_ENTITIES.has(entity!) : KNOWN_EVENTS.has(filter));
    if (!known) {
      throw DomainError.invalid('INVALID_WEBHOOK_EVENT', `Unknown event ${filter}; known events: ${WEBHOOK_EVENTS.join(', ')}`, field);
    }
  });
  return [...new Set(filters)];
}

/**
 * The filters that select an event: itself, its entity's wildcard and `*`. Search uses it to find the subscriptions
 * an event goes to; delivery can use {@link matchesEvent} for one subscription.
 * @throws DomainError 400 INVALID_WEBHOOK_EVENT on the field `event` for an unknown event name
 */
export function filtersSelecting(event: string): string[] {
  if (!KNOWN_EVENTS.has(event)) {
    throw DomainError.invalid('INVALID_WEBHOOK_EVENT', `Unknown event ${event}; known events: ${WEBHOOK_EVENTS.join(', ')}`, 'event');
  }
  return [event, `${event.split(':')[0]}:*`, '*'];
}

/** Whether a subscription with these filters receives the event; never for an event not in {@link WEBHOOK_EVENTS}. */
export function matchesEvent(filters: readonly string[], event: string): boolean {
  if (!KNOWN_EVENTS.has(event)) return false;
  const entityWildcard = `${event.split(':')[0]}:*`;
  return filters.some((f) => f === '*' || f === event || f === entityWildcard);
}
