import type { Server } from 'socket.io';
import type { DriverFix } from '../engine/drivers/driver-location.ts';
import type { RelayedEvent } from '../engine/outbox/outbox-relay.ts';
import type { DriverPosition, FeedEvent } from './events.ts';
import { dispatchRoom, driverRoom, staffRoom } from './rooms.ts';

/** Fields of an event's data that name the driver it concerns (jobs, routes, dispatch offers and assignments). */
const DRIVER_FIELDS = ['driver_user_id', 'assigned_to_driver_id', 'previous_driver_user_id'] as const;

/** The drivers an event concerns: its data's driver fields, or the driver itself for `driver:*` events. */
export function driversOf(event: RelayedEvent): string[] {
  const data = (event.payload.data ?? {}) as Record<string, unknown>;
  const ids = new Set<string>();
  for (const field of DRIVER_FIELDS) if (typeof data[field] === 'string') ids.add(data[field]);
  if (event.entityType === 'driver') ids.add(event.entityId);
  return [...ids];
}

/**
 * An event's data as a driver may see it: without the staff's `internal_notes`, on the entity and on its stops (what
 * the REST answers leave out for drivers too). The outbox carries the staff's view, which the dispatch room gets.
 */
export function asDriverSees(data: Record<string, unknown>): Record<string, unknown> {
  const { internal_notes: _notes, ...visible } = data;
  if (Array.isArray(visible.stops)) {
    visible.stops = visible.stops.map((stop: unknown) => {
      if (!stop || typeof stop !== 'object') return stop;
      const { internal_notes: _stopNotes, ...rest } = stop as Record<string, unknown>;
      return rest;
    });
  }
  return visible;
}

/** The users a private event is for (its data's `participant_user_ids`), or null for a site-wide event. */
function participantsOf(event: RelayedEvent): string[] | null {
  const ids = ((event.payload.data ?? {}) as Record<string, unknown>).participant_user_ids;
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : null;
}

/**
 * Committed outbox events, batch by batch in `seq` order (so in commit order per entity), to the site's `/dispatch`
 * room and to the rooms of the drivers they concern. Emits are synchronous and, with the Redis adapter, published on
 * one connection, so every process delivers them in the same order.
 */
export function publishRelayed(io: Server, events: RelayedEvent[]): void {
  for (const event of events) {
    const message: FeedEvent = {
      event: event.event,
      timestamp: String(event.payload.timestamp ?? new Date().toISOString()),
      entity_type: event.entityType,
      entity_id: event.entityId,
      entity_version: event.entityVersion,
      data: (event.payload.data ?? {}) as Record<string, unknown>,
    };
    const participants = participantsOf(event);
    if (participants) {
      // A private conversation (chat): its participants' own rooms only, never the site's dispatch room.
      if (participants.length === 0) continue;
      io.of('/dispatch').to(participants.map((id) => staffRoom(event.siteId, id))).emit('feed', message);
      io.of('/driver').to(participants.map((id) => driverRoom(event.siteId, id))).emit('feed', message);
      continue;
    }
    io.of('/dispatch').to(dispatchRoom(event.siteId)).emit('feed', message);
    const drivers = driversOf(event);
    if (drivers.length > 0) io.of('/driver').to(drivers.map((id) => driverRoom(event.siteId, id))).emit('feed', { ...message, data: asDriverSees(message.data) });
  }
}

/** One `driver:locations` message per site for the positions the tracker gathered (every `FEED_INTERVAL_MS`, not per ping). */
export function publishPositions(io: Server, siteId: string, applied: DriverFix[]): void {
  const data: DriverPosition[] = applied.map(({ userId, ping }) => ({
    user_id: userId,
    lat: ping.lat,
    lng: ping.lng,
    heading: ping.heading ?? null,
    speed: ping.speed ?? null,
    accuracy: ping.accuracy ?? null,
    recorded_at: ping.recorded_at,
  }));
  io.of('/dispatch').to(dispatchRoom(siteId)).emit('driver:locations', { data });
}
