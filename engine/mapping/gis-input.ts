import { DomainError } from '../domain-error.ts';
import { parseAccessWindow } from './access-window.ts';
import type { PlanRouteInput } from './gis-route.ts';
import type { SequenceInput } from './gis-sequence.ts';
import type { LatLng, RoutingMode, TransportMode } from './mapping-provider.ts';

/*
 * The spec's route and sequence requests (already schema-checked) as the engine's inputs: defaults filled in and
 * the rules a schema cannot express checked, each failure a 400 naming the field in the HTTP layer's style
 * (`waypoints.2.id`).
 */

export type RouteRequestShape = {
  origin: LatLng;
  destination: LatLng;
  waypoints?: { id: string; lat: number; lng: number; options?: { stop_duration?: number; stop_over?: boolean } }[];
  options?: {
    alternatives?: number;
    avoid_features?: string[];
    departure_time?: string;
    optimize?: boolean;
    routing_mode?: RoutingMode;
    transport_mode?: TransportMode;
  };
};

export type SequenceRequestShape = {
  start: LatLng;
  end: LatLng;
  waypoints: { id: string; lat: number; lng: number; service_time?: number; access_window?: string }[];
  departure_time?: string;
  optimize_for?: 'time' | 'distance';
  routing_mode?: RoutingMode;
  transport_mode?: TransportMode;
};

/** @throws DomainError 400 DUPLICATE_WAYPOINT_ID, STOP_DURATION_WITHOUT_STOP, INVALID_DEPARTURE_TIME */
export function toPlanRouteInput(request: RouteRequestShape, now: Date): PlanRouteInput {
  const waypoints = request.waypoints ?? [];
  assertUniqueIds(waypoints);
  const options = request.options ?? {};
  return {
    origin: pointOf(request.origin),
    destination: pointOf(request.destination),
    waypoints: waypoints.map((w, i) => {
      const stopOver = w.options?.stop_over ?? true;
      const stopSeconds = w.options?.stop_duration ?? 0;
      if (!stopOver && stopSeconds > 0) {
        const field = `waypoints.${i}.options.stop_duration`;
        throw DomainError.invalid('STOP_DURATION_WITHOUT_STOP', `${field}: a pass-through waypoint (stop_over false) has no stop duration`, field);
      }
      return { id: w.id, lat: w.lat, lng: w.lng, stopSeconds, stopOver };
    }),
    mode: options.transport_mode ?? 'car',
    routingMode: options.routing_mode ?? 'fast',
    alternatives: options.alternatives ?? 0,
    avoidFeatures: [...new Set(options.avoid_features ?? [])],
    departure: departureOf(options.departure_time, now, 'options.departure_time'),
    optimize: options.optimize ?? false,
  };
}

/**
 * @param timeZone the site's, for `HH:MM-HH:MM` access windows
 * @throws DomainError 400 DUPLICATE_WAYPOINT_ID, INVALID_ACCESS_WINDOW, INVALID_DEPARTURE_TIME
 */
export function toSequenceInput(request: SequenceRequestShape, now: Date, timeZone: string): SequenceInput {
  assertUniqueIds(request.waypoints);
  const departure = departureOf(request.departure_time, now, 'departure_time');
  return {
    start: pointOf(request.start),
    end: pointOf(request.end),
    waypoints: request.waypoints.map((w, i) => ({
      id: w.id,
      lat: w.lat,
      lng: w.lng,
      serviceSeconds: w.service_time ?? 0,
      windows: parseAccessWindow(w.access_window ?? '', departure, timeZone, `waypoints.${i}.access_window`),
    })),
    departure,
    optimizeFor: request.optimize_for ?? 'time',
    mode: request.transport_mode ?? 'car',
  };
}

function assertUniqueIds(waypoints: { id: string }[]): void {
  const seen = new Set<string>();
  waypoints.forEach((w, i) => {
    if (seen.has(w.id)) throw DomainError.invalid('DUPLICATE_WAYPOINT_ID', `waypoints.${i}.id: "${w.id}" is used twice`, `waypoints.${i}.id`);
    seen.add(w.id);
  });
}

function departureOf(text: string | undefined, now: Date, field: string): Date {
  if (text === undefined) return now;
  const date = new Date(text);
  if (!Number.isFinite(date.getTime())) throw DomainError.invalid('INVALID_DEPARTURE_TIME', `${field} must be a date-time`, field);
  return date;
}

function pointOf(point: LatLng): LatLng {
  return { lat: point.lat, lng: point.lng };
}
