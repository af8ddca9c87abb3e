import { Type } from 'typebox';
import { ROUTING_MODES, TRANSPORT_MODES } from '../../engine/mapping/mapping-provider.ts';
import type { PlannedRoute } from '../../engine/mapping/gis-route.ts';
import type { SequencePlan } from '../../engine/mapping/gis-sequence.ts';
import { Nullable, Point, Timestamp } from './common.schema.ts';

/** OSRM's table and route services take up to 100 coordinates by default: origin + destination + 98. */
const MAX_WAYPOINTS = 98;

const Latitude = Type.Number({ minimum: -90, maximum: 90 });
const Longitude = Type.Number({ minimum: -180, maximum: 180 });
const WaypointId = Type.String({ minLength: 1, maxLength: 64, description: "the caller's reference, unique in the request" });
const TransportMode = Type.Union(TRANSPORT_MODES.map((m) => Type.Literal(m)), { description: `${TRANSPORT_MODES.join(', ')}; default car` });
const RoutingMode = Type.Union(ROUTING_MODES.map((m) => Type.Literal(m)), { description: 'fast (least time, default) or short (least distance)' });
const Seconds = Type.Integer({ minimum: 0, maximum: 86_400 });

export const RouteRequestBody = Type.Object(
  {
    origin: Point,
    destination: Point,
    waypoints: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: WaypointId,
            lat: Latitude,
            lng: Longitude,
            options: Type.Optional(
              Type.Object(
                {
                  stop_duration: Type.Optional({ ...Seconds, description: 'seconds spent at the stop; default 0' }),
                  stop_over: Type.Optional(Type.Boolean({ description: 'true (default): a stop where a leg ends; false: the route only passes through' })),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_WAYPOINTS },
      ),
    ),
    options: Type.Optional(
      Type.Object(
        {
          alternatives: Type.Optional(Type.Integer({ minimum: 0, maximum: 3, description: 'extra routes to return (OSRM: only without waypoints)' })),
          avoid_features: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 40 }), { maxItems: 10, description: "road classes to avoid, among the provider's (OSRM: toll, motorway, ferry; offline: none)" }),
          ),
          departure_time: Type.Optional({ ...Timestamp, description: 'when the vehicle leaves the origin; default now' }),
          optimize: Type.Optional(Type.Boolean({ description: 'reorder the waypoints between origin and destination' })),
          routing_mode: Type.Optional(RoutingMode),
          transport_mode: Type.Optional(TransportMode),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const SequenceRequestBody = Type.Object(
  {
    start: Point,
    end: Point,
    waypoints: Type.Array(
      Type.Object(
        {
          id: WaypointId,
          lat: Latitude,
          lng: Longitude,
          service_time: Type.Optional({ ...Seconds, description: 'seconds of service at the waypoint; default 0' }),
          access_window: Type.Optional(
            Type.String({ maxLength: 500, description: 'when service may start: "09:00-11:00,14:00-16:00" (site time zone, departure day) or ISO intervals "2026-11-21T09:00Z/2026-11-21T11:00Z"' }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_WAYPOINTS },
    ),
    departure_time: Type.Optional({ ...Timestamp, description: 'when the vehicle leaves the start; default now' }),
    optimize_for: Type.Optional(Type.Union([Type.Literal('time'), Type.Literal('distance')], { description: 'default time' })),
    routing_mode: Type.Optional(RoutingMode),
    transport_mode: Type.Optional(TransportMode),
  },
  { additionalProperties: false },
);

const Window = Type.Object({ start: Timestamp, end: Timestamp }, { additionalProperties: false });
const Encoded = Type.String({ description: 'Google encoded polyline, precision 5' });

export const RouteResponse = Type.Object(
  {
    provider: Type.String({ description: 'the engine that answered (the offline fallback names itself)' }),
    distance_meters: Type.Number(),
    duration_seconds: Type.Integer({ description: 'travel time only' }),
    stop_duration_seconds: Type.Integer(),
    total_duration_seconds: Type.Integer({ description: 'travel plus stop durations' }),
    departure_time: Timestamp,
    arrival_time: Timestamp,
    geometry: Encoded,
    geometry_is_estimate: Type.Boolean({ description: 'true: straight lines between the points (no road data)' }),
    waypoint_order: Type.Array(Type.String(), { description: 'waypoint ids in visiting order' }),
    optimized: Type.Boolean(),
    stops: Type.Array(
      Type.Object(
        {
          kind: Type.Union([Type.Literal('origin'), Type.Literal('waypoint'), Type.Literal('destination')]),
          id: Nullable(Type.String()),
          lat: Type.Number(),
          lng: Type.Number(),
          arrival_time: Nullable(Timestamp),
          departure_time: Nullable(Timestamp),
          stop_duration: Type.Integer(),
        },
        { additionalProperties: false },
      ),
    ),
    legs: Type.Array(
      Type.Object(
        {
          from: Type.Integer({ description: 'index into stops' }),
          to: Type.Integer(),
          distance_meters: Type.Number(),
          duration_seconds: Type.Integer(),
          departure_time: Timestamp,
          arrival_time: Timestamp,
        },
        { additionalProperties: false },
      ),
    ),
    alternatives: Type.Array(Type.Object({ distance_meters: Type.Number(), duration_seconds: Type.Integer(), geometry: Encoded }, { additionalProperties: false })),
    notes: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export const SequenceResponse = Type.Object(
  {
    provider: Type.String(),
    optimized: Type.Boolean(),
    waypoints: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          sequence: Type.Integer({ minimum: 1 }),
          lat: Type.Number(),
          lng: Type.Number(),
          arrival_time: Timestamp,
          service_start_time: Timestamp,
          departure_time: Timestamp,
          wait_seconds: Type.Integer(),
          service_time: Type.Integer(),
          window: Nullable(Window),
          feasible: Type.Boolean(),
          late_by_seconds: Type.Integer(),
          infeasible_reason: Nullable(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
    end_arrival_time: Timestamp,
    distance_meters: Type.Number(),
    travel_seconds: Type.Integer(),
    service_seconds: Type.Integer(),
    wait_seconds: Type.Integer(),
    infeasible_waypoint_ids: Type.Array(Type.String()),
    notes: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export function toRouteResponse(route: PlannedRoute) {
  return {
    provider: route.provider,
    distance_meters: route.distanceMeters,
    duration_seconds: route.durationSeconds,
    stop_duration_seconds: route.stopSeconds,
    total_duration_seconds: route.durationSeconds + route.stopSeconds,
    departure_time: route.departure.toISOString(),
    arrival_time: route.arrival.toISOString(),
    geometry: route.geometry,
    geometry_is_estimate: route.geometryIsEstimate,
    waypoint_order: route.waypointOrder,
    optimized: route.optimized,
    stops: route.stops.map((s) => ({
      kind: s.kind,
      id: s.id,
      lat: s.point.lat,
      lng: s.point.lng,
      arrival_time: s.arrival?.toISOString() ?? null,
      departure_time: s.departure?.toISOString() ?? null,
      stop_duration: s.stopSeconds,
    })),
    legs: route.legs.map((l) => ({
      from: l.from,
      to: l.to,
      distance_meters: l.distanceMeters,
      duration_seconds: l.durationSeconds,
      departure_time: l.departure.toISOString(),
      arrival_time: l.arrival.toISOString(),
    })),
    alternatives: route.alternatives.map((a) => ({ distance_meters: a.distanceMeters, duration_seconds: a.durationSeconds, geometry: a.geometry })),
    notes: route.notes,
  };
}

export function toSequenceResponse(plan: SequencePlan) {
  return {
    provider: plan.provider,
    optimized: plan.optimized,
    waypoints: plan.waypoints.map((w) => ({
      id: w.id,
      sequence: w.sequence,
      lat: w.point.lat,
      lng: w.point.lng,
      arrival_time: w.arrival.toISOString(),
      service_start_time: w.serviceStart.toISOString(),
      departure_time: w.departure.toISOString(),
      wait_seconds: w.waitSeconds,
      service_time: w.serviceSeconds,
      window: w.window ? { start: new Date(w.window.start).toISOString(), end: new Date(w.window.end).toISOString() } : null,
      feasible: w.feasible,
      late_by_seconds: w.lateBySeconds,
      infeasible_reason: w.infeasibleReason,
    })),
    end_arrival_time: plan.endArrival.toISOString(),
    distance_meters: plan.distanceMeters,
    travel_seconds: plan.travelSeconds,
    service_seconds: plan.serviceSeconds,
    wait_seconds: plan.waitSeconds,
    infeasible_waypoint_ids: plan.infeasibleIds,
    notes: plan.notes,
  };
}
