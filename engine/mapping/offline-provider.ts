import { distance } from '@turf/distance';
import { DomainError } from '../domain-error.ts';
import { assertLatLng, assertLatLngs, assertRouteRequest, assertTransportMode } from './mapping-input.ts';
import type { DistanceMatrix, LatLng, MappingProvider, NearestPoint, RouteLeg, RouteRequest, RouteResult } from './mapping-provider.ts';
import { resolveOfflineConfig, type OfflineMappingConfig, type TransportProfile } from './offline-config.ts';

type Coord = [lng: number, lat: number];

// One options object for every call: the matrix makes thousands of calls per request.
const METERS = { units: 'meters' } as const;

/**
 * A provider that needs no network and gives the same answer every time: the great-circle distance
 * (`@turf/distance`, haversine on a sphere of radius 6,371,008.8 m) times the mode's detour factor, and a travel
 * time from the mode's average speed. Good enough to rank drivers and give first ETAs; a road engine replaces it
 * where streets matter (rivers, motorways, one-way systems).
 *
 * Distances are meters (not rounded), durations whole seconds (rounded per leg, so totals are the sums of legs).
 * The departure time only places ETAs on the clock: there is no traffic model.
 *
 * @param config speeds, detour factors and the matrix cell limit; omitted keys take the defaults
 * @throws DomainError 400 INVALID_MAPPING_CONFIG when the config is malformed
 */
export function createOfflineProvider(config: OfflineMappingConfig = {}): MappingProvider {
  const { profiles, maxMatrixCells } = resolveOfflineConfig(config);

  return {
    name: 'offline',
    // Straight lines know no road classes: nothing to avoid.
    avoidFeatures: [],

    async route(request: RouteRequest): Promise<RouteResult> {
      assertRouteRequest(request);
      const profile = profiles[request.mode];
      const { waypoints, departure_time: departure } = request;
      const legs: RouteLeg[] = [];
      let cumulativeMeters = 0;
      let elapsedSeconds = 0;
      let travelSeconds = 0;
      for (let i = 0; i + 1 < waypoints.length; i++) {
        const from = waypoints[i]!;
        const to = waypoints[i + 1]!;
        const meters = roadMeters(toCoord(from), toCoord(to), profile);
        const seconds = travelTime(meters, profile);
        cumulativeMeters += meters;
        travelSeconds += seconds;
        // The vehicle serves a waypoint before leaving it, so its service time delays every later arrival.
        elapsedSeconds += (from.service_seconds ?? 0) + seconds;
        const leg: RouteLeg = {
          from: i,
          to: i + 1,
          distance_meters: meters,
          duration_seconds: seconds,
          cumulative_distance_meters: cumulativeMeters,
          cumulative_duration_seconds: elapsedSeconds,
        };
        if (departure) {
          leg.estimated_arrival_at = addSeconds(departure, elapsedSeconds);
          leg.estimated_completion_at = addSeconds(departure, elapsedSeconds + (to.service_seconds ?? 0));
        }
        legs.push(leg);
      }
      const serviceSeconds = waypoints.reduce((sum, w) => sum + (w.service_seconds ?? 0), 0);
      return { distance_meters: cumulativeMeters, duration_seconds: travelSeconds, service_seconds: serviceSeconds, legs };
    },

    async matrix(origins: LatLng[], destinations: LatLng[], mode): Promise<DistanceMatrix> {
      assertTransportMode(mode);
      assertLatLngs(origins, 'origins');
      assertLatLngs(destinations, 'destinations');
      const cells = origins.length * destinations.length;
      if (cells > maxMatrixCells) {
        throw DomainError.unprocessable(
          'MATRIX_TOO_LARGE',
          `${origins.length} × ${destinations.length} = ${cells} cells is over this provider's limit of ${maxMatrixCells}`,
        );
      }
      const profile = profiles[mode];
      const to = destinations.map(toCoord);
      const distances: number[][] = [];
      const durations: number[][] = [];
      for (const origin of origins) {
        const from = toCoord(origin);
        // Grown by push, not `Array.from({ length })` (the generic iteration protocol, slower than the arithmetic).
        const distanceRow: number[] = [];
        const durationRow: number[] = [];
        for (let j = 0; j < to.length; j++) {
          const meters = roadMeters(from, to[j]!, profile);
          distanceRow.push(meters);
          durationRow.push(travelTime(meters, profile));
        }
        distances.push(distanceRow);
        durations.push(durationRow);
      }
      return { distances_meters: distances, durations_seconds: durations };
    },

    async nearest(point: LatLng, mode): Promise<NearestPoint> {
      assertLatLng(point, 'point');
      assertTransportMode(mode);
      // No road network: the point is already as close to "the road" as this provider can tell.
      return { point: { lat: point.lat, lng: point.lng }, distance_meters: 0, name: '' };
    },

    async geocode(query: string): Promise<never> {
      if (typeof query !== 'string' || query.trim() === '') {
        throw DomainError.invalid('INVALID_GEOCODE_QUERY', 'query must be a non-empty string', 'query');
      }
      throw geocodingUnavailable();
    },

    async reverseGeocode(point: LatLng): Promise<never> {
      assertLatLng(point, 'point');
      throw geocodingUnavailable();
    },
  };
}

/**
 * Haversine is symmetric in theory but not bit for bit (the cosine products are multiplied in call order), so the
 * pair is put in a fixed order: A→B and B→A give the identical number, and ties between drivers stay stable.
 */
function roadMeters(a: Coord, b: Coord, profile: TransportProfile): number {
  const ordered = a[1] < b[1] || (a[1] === b[1] && a[0] <= b[0]);
  const straight = ordered ? distance(a, b, METERS) : distance(b, a, METERS);
  return straight * profile.detour_factor;
}

function travelTime(meters: number, profile: TransportProfile): number {
  return Math.round(meters / (profile.speed_kmh / 3.6));
}

function toCoord(point: LatLng): Coord {
  return [point.lng, point.lat];
}

function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}

function geocodingUnavailable(): DomainError {
  return DomainError.unprocessable(
    'GEOCODING_UNAVAILABLE',
    'the offline mapping provider has no address data: give a point {lat, lng}, or connect a geocoding integration',
  );
}
