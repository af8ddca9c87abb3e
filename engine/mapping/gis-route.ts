import polyline from '@mapbox/polyline';
import { DomainError } from '../domain-error.ts';
import type { LatLng, MappingProvider, RouteResult, RoutingMode, TransportMode } from './mapping-provider.ts';
import { orderWaypoints } from './waypoint-order.ts';

/** A point the route goes through; a stop-over one is a stop (a leg ends there), the others only shape the route. */
export type RouteWaypointInput = LatLng & { id: string; stopSeconds: number; stopOver: boolean };

export type PlanRouteInput = {
  origin: LatLng;
  destination: LatLng;
  waypoints: RouteWaypointInput[];
  mode: TransportMode;
  routingMode: RoutingMode;
  alternatives: number;
  avoidFeatures: string[];
  departure: Date;
  /** Reorder the waypoints between the fixed origin and destination for the least travel. */
  optimize: boolean;
};

export type PlannedRouteStop = {
  kind: 'origin' | 'waypoint' | 'destination';
  id: string | null;
  point: LatLng;
  arrival: Date | null;
  departure: Date | null;
  stopSeconds: number;
};

export type PlannedRouteLeg = { from: number; to: number; distanceMeters: number; durationSeconds: number; departure: Date; arrival: Date };

export type PlannedRoute = {
  provider: string;
  distanceMeters: number;
  durationSeconds: number;
  stopSeconds: number;
  departure: Date;
  arrival: Date;
  /** Google encoded polyline, precision 5. */
  geometry: string;
  /** True when the provider knows no roads and the geometry joins the points with straight lines. */
  geometryIsEstimate: boolean;
  waypointOrder: string[];
  optimized: boolean;
  stops: PlannedRouteStop[];
  legs: PlannedRouteLeg[];
  alternatives: { distanceMeters: number; durationSeconds: number; geometry: string }[];
  notes: string[];
};

/**
 * A route from origin to destination through the waypoints, as `POST /gis/route` answers it: legs between stops
 * (pass-through waypoints merge into the leg that crosses them), the clock times of each stop from the departure,
 * travel plus stop durations, and the road geometry.
 *
 * @throws DomainError 400 UNSUPPORTED_AVOID_FEATURES naming the ones the site's provider cannot honour; whatever
 *   the provider throws (400 input, 422 NO_ROUTE / MATRIX_TOO_LARGE, 502 MAPPING_PROVIDER_ERROR)
 */
export async function planRoute(provider: MappingProvider, input: PlanRouteInput): Promise<PlannedRoute> {
  const unsupported = input.avoidFeatures.filter((f) => !provider.avoidFeatures.includes(f));
  if (unsupported.length) {
    const supported = provider.avoidFeatures.length ? provider.avoidFeatures.join(', ') : 'none';
    throw DomainError.invalid('UNSUPPORTED_AVOID_FEATURES', `the ${provider.name} provider cannot avoid ${unsupported.join(', ')} (it supports: ${supported})`, 'options.avoid_features');
  }
  const notes: string[] = [];
  let waypoints = input.waypoints;
  // With one waypoint or none, the given order is the only one.
  let optimized = input.optimize && waypoints.length <= 1;
  if (input.optimize && waypoints.length > 1) {
    const ordered = await orderWaypoints(provider, {
      start: input.origin,
      end: input.destination,
      visits: waypoints.map((w) => ({ point: w, serviceSeconds: w.stopSeconds, windows: [] })),
      mode: input.mode,
      objective: input.routingMode === 'short' ? 'distance' : 'duration',
      departure: input.departure,
    });
    waypoints = ordered.order.map((i) => waypoints[i]!);
    optimized = ordered.optimized;
    notes.push(...ordered.notes);
  }
  const points = [input.origin, ...waypoints, input.destination];
  const result = await provider.route({
    waypoints: points.map((p) => ({ lat: p.lat, lng: p.lng })),
    mode: input.mode,
    routing_mode: input.routingMode,
    alternatives: input.alternatives,
    avoid_features: input.avoidFeatures,
  });
  if (result.answered_by) {
    notes.push(`answered by ${result.answered_by.provider}: ${result.answered_by.fallback_reason}`);
    if (input.avoidFeatures.length) notes.push(`avoid_features ignored by the ${result.answered_by.provider} estimate`);
  }
  notes.push(...(result.notes ?? []));
  const found = result.alternatives?.length ?? 0;
  if (input.alternatives > found) {
    // OSRM computes alternatives between two points only; the offline provider has none to offer.
    notes.push(`${found} of ${input.alternatives} alternative routes found`);
  }
  const { stops, legs, arrival } = layOutStops(points, waypoints, result, input.departure);
  const stopSeconds = waypoints.reduce((sum, w) => sum + (w.stopOver ? w.stopSeconds : 0), 0);
  return {
    provider: result.answered_by?.provider ?? provider.name,
    distanceMeters: result.distance_meters,
    durationSeconds: result.duration_seconds,
    stopSeconds,
    departure: input.departure,
    arrival,
    geometry: encodeGeometry(result, points),
    geometryIsEstimate: !result.geometry,
    waypointOrder: waypoints.map((w) => w.id),
    optimized,
    stops,
    legs,
    alternatives: (result.alternatives ?? []).map((a) => ({ distanceMeters: a.distance_meters, durationSeconds: a.duration_seconds, geometry: encodeGeometry(a, points) })),
    notes,
  };
}

/**
 * Stops (origin, stop-over waypoints, destination) with their clock times, and one leg between consecutive stops:
 * a pass-through waypoint's two provider legs add up into the leg that crosses it.
 */
function layOutStops(points: LatLng[], waypoints: RouteWaypointInput[], result: RouteResult, departure: Date) {
  const last = points.length - 1;
  const stops: PlannedRouteStop[] = [];
  const legs: PlannedRouteLeg[] = [];
  let clock = departure.getTime();
  let legMeters = 0;
  let legSeconds = 0;
  let legStart = clock;
  points.forEach((point, i) => {
    if (i > 0) {
      const leg = result.legs[i - 1]!;
      legMeters += leg.distance_meters;
      legSeconds += leg.duration_seconds;
      clock += leg.duration_seconds * 1000;
    }
    const waypoint = i === 0 || i === last ? null : waypoints[i - 1]!;
    if (waypoint && !waypoint.stopOver) return;
    if (i > 0) {
      legs.push({ from: stops.length - 1, to: stops.length, distanceMeters: legMeters, durationSeconds: legSeconds, departure: new Date(legStart), arrival: new Date(clock) });
    }
    const arrival = i === 0 ? null : new Date(clock);
    clock += (waypoint?.stopSeconds ?? 0) * 1000;
    stops.push({
      kind: waypoint ? 'waypoint' : i === 0 ? 'origin' : 'destination',
      id: waypoint?.id ?? null,
      point: { lat: point.lat, lng: point.lng },
      arrival,
      departure: i === last ? null : new Date(clock),
      stopSeconds: waypoint?.stopSeconds ?? 0,
    });
    legMeters = 0;
    legSeconds = 0;
    legStart = clock;
  });
  return { stops, legs, arrival: new Date(clock) };
}

/** The provider's road shape, or straight lines through the points when it has none. */
function encodeGeometry(result: RouteResult, points: LatLng[]): string {
  const lngLat = result.geometry?.coordinates ?? points.map((p) => [p.lng, p.lat] as [number, number]);
  return polyline.encode(lngLat.map(([lng, lat]) => [lat, lng]));
}
