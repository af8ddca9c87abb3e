import { Type, type Static } from 'typebox';
import { ErrorBody } from '../http/schemas/common.schema.ts';
import { LocationBody } from '../http/schemas/driver.schema.ts';

/**
 * The socket API's messages, as TypeBox schemas (the README's AsyncAPI-style table is written from these), and the
 * typed event maps socket.io's generics take. A fix is the REST body of POST /driver/location: one definition.
 */
export const LocationFix = LocationBody;
export type LocationFix = Static<typeof LocationFix>;

/** An offline app's backlog, oldest first (the order they are applied in). */
export const LocationBatch = Type.Array(LocationFix, { minItems: 1, maxItems: 500 });

export const ErrorReply = ErrorBody;
export type ErrorReply = Static<typeof ErrorBody>;

/** The verdict on one fix: applied, or why not (`stale`: older than the applied one; `duplicate`: exactly it). */
export const LocationVerdict = Type.Object(
  { accepted: Type.Boolean(), reason: Type.Optional(Type.Union([Type.Literal('stale'), Type.Literal('duplicate')])) },
  { additionalProperties: false },
);

export const LocationReply = Type.Union([Type.Object({ data: LocationVerdict }), ErrorReply]);
export type LocationReply = Static<typeof LocationReply>;

export const LocationBatchReply = Type.Union([Type.Object({ data: Type.Object({ accepted: Type.Integer(), results: Type.Array(LocationVerdict) }) }), ErrorReply]);
export type LocationBatchReply = Static<typeof LocationBatchReply>;

/** A driver's current position as dispatch sees it. */
export const DriverPosition = Type.Object({
  user_id: Type.String(),
  lat: Type.Number(),
  lng: Type.Number(),
  heading: Type.Union([Type.Number(), Type.Null()]),
  speed: Type.Union([Type.Number(), Type.Null()]),
  accuracy: Type.Union([Type.Number(), Type.Null()]),
  recorded_at: Type.String({ format: 'date-time' }),
});
export type DriverPosition = Static<typeof DriverPosition>;

/** Positions of one site committed in the last 50 ms (`FEED_INTERVAL_MS`), in commit order: one message per interval, not per ping. */
export const DriverLocations = Type.Object({ data: Type.Array(DriverPosition) });
export type DriverLocations = Static<typeof DriverLocations>;

/** A committed outbox event (the webhook envelope plus the entity it is about), in commit order per entity. */
export const FeedEvent = Type.Object({
  event: Type.String({ description: 'e.g. job:state_change, stop:state_change, route:*, dispatch:*' }),
  timestamp: Type.String({ format: 'date-time' }),
  entity_type: Type.String(),
  entity_id: Type.String(),
  entity_version: Type.Union([Type.Integer(), Type.Null()]),
  data: Type.Record(Type.String(), Type.Unknown()),
});
export type FeedEvent = Static<typeof FeedEvent>;

/** `/driver`: what a driver app sends. */
export type DriverClientEvents = {
  location(fix: unknown, ack?: (reply: LocationReply) => void): void;
  locations(fixes: unknown, ack?: (reply: LocationBatchReply) => void): void;
};

/** `/driver`: what a driver app receives (events about their own jobs, routes and dispatches). */
export type DriverServerEvents = {
  feed(event: FeedEvent): void;
  error(error: ErrorReply): void;
};

/** `/dispatch`: dispatchers and admins only listen. */
export type DispatchClientEvents = Record<string, never>;

export type DispatchServerEvents = {
  'driver:locations'(positions: DriverLocations): void;
  feed(event: FeedEvent): void;
  error(error: ErrorReply): void;
};

/** What the handshake leaves on every socket. */
export type SocketData = { siteId: string; subdomain: string; userId: string; role: string; applicationId: string | null };
