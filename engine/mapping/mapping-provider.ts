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

/** `fast`: least travel time; `short`: least distance (road engines pick the shortest of their alternatives). */
export const ROUTING_MODES = ['fast', 'short'] as const;
export type RoutingMode = (typeof ROUTING_MODES)[number];

export type RouteRequest = {
  /** Visited in this order (sequencing is the optimizer's job, not the provider's); at least two. */
  waypoints: RouteWaypoint[];
  mode: TransportMode;
  /** Default `fast`. */
  routing_mode?: RoutingMode;
  /** How many alternative routes to add, when the provider can (0 by default). */
  alternatives?: number;
  /** Road classes to stay off; each must be in the provider's `avoidFeatures` (callers check first). */
  avoid_features?: string[];
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
  /** Other routes along the same waypoints, when asked for and the provider found some. */
  alternatives?: RouteResult[];
  /** Set by the fallback wrapper when another provider answered, with why the first one could not. */
  answered_by?: { provider: string; fallback_reason: string };
  /** What the provider could not do as asked (an option it had to leave out), for the answer's `notes`. */
  notes?: string[];
};

/** Row i, column j: from origins[i] to destinations[j]. */
export type DistanceMatrix = {
  distances_meters: number[][];
  /** Whole seconds. */
  durations_seconds: number[][];
  /** Set by the fallback wrapper when another provider answered. */
  answered_by?: { provider: string; fallback_reason: string };
};

/** The closest point on the road network. */
export type NearestPoint = {
  point: LatLng;
  /** From the asked point to `point`. */
  distance_meters: number;
  /** Street name, when known ('' otherwise). */
  name: string;
};

export type GeocodeMatch = {
  point: LatLng;
  /** One-line label for people ("12 Rue de Rivoli, 75004 Paris"). */
  label: string;
};

export interface MappingProvider {
  /** Which engine answers, for logs and the integration view ("offline", "osrm", "nominatim"). */
  readonly name: string;
  /** The `avoid_features` values this provider honours; a route request naming another one is refused by callers. */
  readonly avoidFeatures: readonly string[];
  /**
   * Distance and travel time along the waypoints in order.
   * @throws DomainError 400 on invalid coordinates, mode, service time or fewer than two waypoints; 502
   *   MAPPING_PROVIDER_ERROR when a remote engine fails, answers garbage or does not answer in time
   */
  route(request: RouteRequest): Promise<RouteResult>;
  /**
   * Every origin to every destination (dispatch asks for N drivers × 1 job).
   * @throws DomainError 400 on invalid input; 422 MATRIX_TOO_LARGE past the provider's cell limit, 422 NO_ROUTE
   *   when a remote engine finds no road between a pair; 502 MAPPING_PROVIDER_ERROR when it fails
   */
  matrix(origins: LatLng[], destinations: LatLng[], mode: TransportMode): Promise<DistanceMatrix>;
  /**
   * Snaps a point to the road network (the offline provider has none and returns the point itself).
   * @throws DomainError 400 on invalid input; 502 MAPPING_PROVIDER_ERROR when a remote engine fails
   */
  nearest(point: LatLng, mode: TransportMode): Promise<NearestPoint>;
  /**
   * Candidate positions for a free-text address, best first.
   * @throws DomainError 422 GEOCODING_UNAVAILABLE when the provider has no address data; 502 MAPPING_PROVIDER_ERROR
   */
  geocode(query: string): Promise<GeocodeMatch[]>;
  /**
   * The address at a position, or null when there is none.
   * @throws DomainError 422 GEOCODING_UNAVAILABLE when the provider has no address data; 502 MAPPING_PROVIDER_ERROR
   */
  reverseGeocode(point: LatLng): Promise<GeocodeMatch | null>;
}
