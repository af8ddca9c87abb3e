import { DomainError } from '../domain-error.ts';
import { isTransportMode, TRANSPORT_MODES, type LatLng, type RouteRequest, type TransportMode } from './mapping-provider.ts';

/*
 * Input checks shared by every provider, so a bad coordinate fails the same way (400, same code, same field)
 * whichever engine a site uses, and before any network call a road engine would make.
 */

/** @throws DomainError 400 INVALID_COORDINATES naming `field` (e.g. `origins[3].lat`) */
export function assertLatLng(point: LatLng, field: string): void {
  if (typeof point !== 'object' || point === null) {
    throw DomainError.invalid('INVALID_COORDINATES', `${field} must be a point {lat, lng}`, field);
  }
  const { lat, lng } = point;
  if (typeof lat !== 'number' || !Number.isFinite(lat) || lat < -90 || lat > 90) {
    throw DomainError.invalid('INVALID_COORDINATES', `${field}.lat must be a number from -90 to 90`, `${field}.lat`);
  }
  if (typeof lng !== 'number' || !Number.isFinite(lng) || lng < -180 || lng > 180) {
    throw DomainError.invalid('INVALID_COORDINATES', `${field}.lng must be a number from -180 to 180`, `${field}.lng`);
  }
}

/** @throws DomainError 400 INVALID_COORDINATES at the first bad point */
export function assertLatLngs(points: LatLng[], field: string): void {
  if (!Array.isArray(points)) throw DomainError.invalid('INVALID_COORDINATES', `${field} must be an array of points`, field);
  // The point's field name (`origins.3`, as the schema's errors write paths) is built only for a bad point: a matrix checks every origin on every call.
  for (let i = 0; i < points.length; i++) if (!isLatLng(points[i])) assertLatLng(points[i]!, `${field}.${i}`);
}

/** True for what {@link assertLatLng} accepts. */
function isLatLng(point: unknown): boolean {
  if (typeof point !== 'object' || point === null) return false;
  const { lat, lng } = point as LatLng;
  return typeof lat === 'number' && Number.isFinite(lat) && lat >= -90 && lat <= 90 && typeof lng === 'number' && Number.isFinite(lng) && lng >= -180 && lng <= 180;
}

/** @throws DomainError 400 INVALID_TRANSPORT_MODE */
export function assertTransportMode(mode: unknown, field = 'mode'): asserts mode is TransportMode {
  if (!isTransportMode(mode)) {
    throw DomainError.invalid('INVALID_TRANSPORT_MODE', `${field} must be one of ${TRANSPORT_MODES.join(', ')}`, field);
  }
}

/**
 * @throws DomainError 400 TOO_FEW_WAYPOINTS, INVALID_COORDINATES, INVALID_SERVICE_TIME, INVALID_TRANSPORT_MODE
 *   or INVALID_DEPARTURE_TIME
 */
export function assertRouteRequest(request: RouteRequest): void {
  const { waypoints } = request;
  if (!Array.isArray(waypoints) || waypoints.length < 2) {
    throw DomainError.invalid('TOO_FEW_WAYPOINTS', 'a route needs at least two waypoints', 'waypoints');
  }
  assertTransportMode(request.mode);
  waypoints.forEach((waypoint, i) => {
    assertLatLng(waypoint, `waypoints.${i}`);
    const service = waypoint.service_seconds;
    // Whole seconds, like the durations, so every ETA offset stays an integer.
    if (service !== undefined && !(Number.isInteger(service) && service >= 0)) {
      const field = `waypoints.${i}.service_seconds`;
      throw DomainError.invalid('INVALID_SERVICE_TIME', `${field} must be a whole number of seconds, 0 or more`, field);
    }
  });
  const departure = request.departure_time;
  if (departure !== undefined && !(departure instanceof Date && Number.isFinite(departure.getTime()))) {
    throw DomainError.invalid('INVALID_DEPARTURE_TIME', 'departure_time must be a valid date', 'departure_time');
  }
}
