/**
 * The one way the engine asks about the map (DESIGN §8). Dispatch, ETAs and the optimizer depend on this
 * interface only, so a site can swap the offline estimate for a road engine without touching decision code.
 *
 * Units everywhere: meters, seconds, WGS84 degrees. Methods are async because real engines answer over the
 * network; the offline provider resolves at once.
 */

/** A WGS84 position, the same `{lat, lng}` as the API's Point. */
export type LatLng = { lat: number; lng: number };

/** How the vehicle moves; the names match the vehicle types so a vehicle's type selects its profile. */
export const TRANSPORT_MODES = ['car', 'van', 'truck', 'bike', 'scooter', 'on_foot'] as const;
export type TransportMode = (typeof TRANSPORT_MODES)[number];

export function isTransportMode(value: unknown): value is TransportMode {
  return typeof value === 'string' && (TRANSPORT_MODES as readonly string[]).includes(value);
}

/**
 * Vehicle types with no profile of their own borrow the closest one (a cargo bike rides like a bike, a motorcycle
 * threads traffic like a scooter); any other type (`other`, unknown) drives like a car, the commonest vehicle.
 * Kept as strings so mapping does not depend on the fleet module's list.
 */
const MODE_FOR_VEHICLE_TYPE: Readonly<Record<string, TransportMode>> = { cargo_bike: 'bike', motorcycle: 'scooter' };

/** The transport mode a vehicle of this type travels by. */
export function transportModeFor(vehicleType: string): TransportMode {
  if (isTransportMode(vehicleType)) return vehicleType;
  return (Object.hasOwn(MODE_FOR_VEHICLE_TYPE, vehicleType) ? MODE_FOR_VEHICLE_TYPE[vehicleType] : undefined) ?? 'car';
}

export type RouteWaypoint = LatLng & {
  /** The caller's own reference (a stop id, a driver id); providers ignore it, legs point back by index. */
  id?: string;
  /** Time spent at this waypoint before leaving it (loading, signature): whole seconds, default 0. */
  service_seconds?: number;
};

export type RouteRequest = {
  /** Visited in this order (sequencing is the optimizer's job, not the provider's); at least two. */
  waypoints: RouteWaypoint[];
  mode: TransportMode;
  /**
   * When the vehicle is at the first waypoint, ready to start its service. With it, legs carry absolute ETAs;
   * road engines may also use it for traffic.
   */
  departure_time?: Date;
};

export type RouteLeg = {
  /** Indexes into the request's waypoints: a leg goes from waypoint `from` to waypoint `from + 1`. */
  from: number;
  to: number;
  distance_meters: number;
  /** Travel time of this leg only, whole seconds. */
  duration_seconds: number;
  /** Distance from the first waypoint to `to`. */
  cumulative_distance_meters: number;
  /** Seconds from departure until arrival at `to`: earlier legs plus the service times of earlier waypoints. */
  cumulative_duration_seconds: number;
  /** Present with a departure_time: arrival at `to`, and the end of its service time. */
  estimated_arrival_at?: Date;
  estimated_completion_at?: Date;
};

export type RouteGeometry = { type: 'LineString'; coordinates: [lng: number, lat: number][] };

export type RouteResult = {
  distance_meters: number;
  /** Travel time only (the sum of the legs); service times are in `service_seconds`. */
  duration_seconds: number;
  /** Sum of the waypoints' service times. */
  service_seconds: number;
  legs: RouteLeg[];
  /** The road shape, when the provider knows it (the offline provider does not, so it leaves this out). */
  geometry?: RouteGeometry;
};

/** Row i, column j: from origins[i] to destinations[j]. */
export type DistanceMatrix = {
  distances_meters: number[][];
  /** Whole seconds. */
  durations_seconds: number[][];
};

export type GeocodeMatch = {
  point: LatLng;
  /** One-line label for people ("12 Rue de Rivoli, 75004 Paris"). */
  label: string;
};

export interface MappingProvider {
  /** Which engine answers, for logs and the integration view ("offline", later "osrm"). */
  readonly name: string;
  /**
   * Distance and travel time along the waypoints in order.
   * @throws DomainError 400 on invalid coordinates, mode, service time or fewer than two waypoints
   */
  route(request: RouteRequest): Promise<RouteResult>;
  /**
   * Every origin to every destination (dispatch asks for N drivers × 1 job).
   * @throws DomainError 400 on invalid input; 422 MATRIX_TOO_LARGE past the provider's cell limit
   */
  matrix(origins: LatLng[], destinations: LatLng[], mode: TransportMode): Promise<DistanceMatrix>;
  /**
   * Candidate positions for a free-text address, best first.
   * @throws DomainError 422 GEOCODING_UNAVAILABLE when the provider has no address data
   */
  geocode(query: string): Promise<GeocodeMatch[]>;
  /**
   * The address at a position, or null when there is none.
   * @throws DomainError 422 GEOCODING_UNAVAILABLE when the provider has no address data
   */
  reverseGeocode(point: LatLng): Promise<GeocodeMatch | null>;
}
