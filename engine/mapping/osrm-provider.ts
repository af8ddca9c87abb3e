import { Type, type Static } from 'typebox';
import { DomainError } from '../domain-error.ts';
import { assertLatLng, assertLatLngs, assertRouteRequest, assertTransportMode } from './mapping-input.ts';
import type { DistanceMatrix, LatLng, MappingProvider, RouteRequest, RouteResult, TransportMode } from './mapping-provider.ts';
import { PUBLIC_ONLY, type MappingNetworkPolicy } from './network-policy.ts';
import { mappingProviderError } from './provider-error.ts';
import { fetchProviderJson } from './provider-fetch.ts';
import { fromOsrmRoute, readOsrmNearest, readOsrmRoute, readOsrmTable } from './osrm-response.ts';
import { RemoteConfigFields, toRemoteConfig, validateMappingConfig } from './remote-config.ts';

/** osrm-routed's own default `--max-table-size`; raise both together. */
const DEFAULT_MAX_TABLE_SIZE = 100;
/** The exclude classes of OSRM's stock car profile. */
const DEFAULT_EXCLUDE_CLASSES = ['toll', 'motorway', 'ferry'];
/** OSRM serves whatever profile it was extracted with; the name in the URL only has to be one it knows. */
const DEFAULT_PROFILES: Record<TransportMode, string> = {
  car: 'driving',
  van: 'driving',
  truck: 'driving',
  scooter: 'driving',
  bike: 'cycling',
  on_foot: 'walking',
};

const ProfileName = Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$' });

export const OsrmConfigSchema = Type.Object(
  {
    ...RemoteConfigFields,
    profiles: Type.Optional(
      Type.Object(
        {
          car: Type.Optional(ProfileName),
          van: Type.Optional(ProfileName),
          truck: Type.Optional(ProfileName),
          scooter: Type.Optional(ProfileName),
          bike: Type.Optional(ProfileName),
          on_foot: Type.Optional(ProfileName),
        },
        { additionalProperties: false, description: 'the OSRM profile name per transport mode' },
      ),
    ),
    exclude_classes: Type.Optional(Type.Array(ProfileName, { maxItems: 20, description: 'what avoid_features may name' })),
    max_table_size: Type.Optional(Type.Integer({ minimum: 2, maximum: 10_000 })),
  },
  { additionalProperties: false },
);
export type OsrmConfig = Static<typeof OsrmConfigSchema>;

/**
 * An OSRM server (osrm-routed, v5 API): `route` for routes, `table` for matrices, `nearest` for snapping. It has
 * no geocoder, so geocoding answers 422 GEOCODING_UNAVAILABLE (pair it with a Nominatim integration for addresses).
 *
 * `avoid_features` map to OSRM's `exclude` classes; `routing_mode: 'short'` asks for alternatives and keeps the
 * shortest, since OSRM itself only minimises its profile's weight (time). OSRM computes alternatives only between
 * two waypoints.
 *
 * @param policy where the server may live (default: public addresses only)
 * @throws DomainError 400 INVALID_MAPPING_CONFIG when the config is malformed
 */
export function createOsrmProvider(raw: unknown, policy: MappingNetworkPolicy = PUBLIC_ONLY): MappingProvider {
  const config = validateMappingConfig(OsrmConfigSchema, raw);
  const remote = toRemoteConfig(config);
  const profiles = { ...DEFAULT_PROFILES, ...config.profiles };
  const maxTableSize = config.max_table_size ?? DEFAULT_MAX_TABLE_SIZE;
  const get = (service: string, mode: TransportMode, points: LatLng[], query: Record<string, string>) => {
    const url = new URL(`${remote.baseUrl}/${service}/v1/${profiles[mode]}/${points.map(toOsrmCoordinate).join(';')}`);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    return fetchProviderJson(url, { provider: 'osrm', timeoutMs: remote.timeoutMs, headers: remote.headers, policy });
  };

  return {
    name: 'osrm',
    avoidFeatures: config.exclude_classes ?? DEFAULT_EXCLUDE_CLASSES,

    async route(request: RouteRequest): Promise<RouteResult> {
      assertRouteRequest(request);
      const short = request.routing_mode === 'short';
      const wanted = Math.max(request.alternatives ?? 0, short ? 2 : 0);
      const query: Record<string, string> = { overview: 'full', geometries: 'polyline', steps: 'false' };
      if (wanted > 0 && request.waypoints.length === 2) query.alternatives = String(wanted);
      if (request.avoid_features?.length) query.exclude = request.avoid_features.join(',');
      const body = readOsrmRoute(await get('route', request.mode, request.waypoints, query));
      let routes = body.routes.map((route) => fromOsrmRoute(route, request.waypoints, request.departure_time));
      if (short) routes = [...routes].sort((a, b) => a.distance_meters - b.distance_meters);
      const [main, ...others] = routes as [RouteResult, ...RouteResult[]];
      const alternatives = others.slice(0, request.alternatives ?? 0);
      // OSRM offers alternatives between two points only, and a short route is the shortest of them.
      const notes = short && request.waypoints.length > 2 ? ['routing_mode short applies between two points only with OSRM: this is the fastest route through the waypoints'] : [];
      return { ...main, ...(alternatives.length ? { alternatives } : {}), ...(notes.length ? { notes } : {}) };
    },

    async matrix(origins: LatLng[], destinations: LatLng[], mode: TransportMode): Promise<DistanceMatrix> {
      assertTransportMode(mode);
      assertLatLngs(origins, 'origins');
      assertLatLngs(destinations, 'destinations');
      // A point that is both an origin and a destination (the usual square matrix) is sent once.
      const points: LatLng[] = [];
      const indexOf = new Map<string, number>();
      const place = (p: LatLng) => {
        const key = toOsrmCoordinate(p);
        let index = indexOf.get(key);
        if (index === undefined) indexOf.set(key, (index = points.push(p) - 1));
        return index;
      };
      const sources = origins.map(place);
      const targets = destinations.map(place);
      if (points.length > maxTableSize) {
        throw DomainError.unprocessable('MATRIX_TOO_LARGE', `${points.length} distinct points is over this OSRM server's table limit of ${maxTableSize}`);
      }
      if (origins.length === 0 || destinations.length === 0) return { distances_meters: origins.map(() => []), durations_seconds: origins.map(() => []) };
      const body = readOsrmTable(
        await get('table', mode, points, { sources: sources.join(';'), destinations: targets.join(';'), annotations: 'duration,distance' }),
      );
      return toMatrix(body.durations, body.distances, origins.length, destinations.length);
    },

    async nearest(point: LatLng, mode: TransportMode) {
      assertLatLng(point, 'point');
      assertTransportMode(mode);
      return readOsrmNearest(await get('nearest', mode, [point], { number: '1' }));
    },

    async geocode(): Promise<never> {
      throw noGeocoder();
    },

    async reverseGeocode(point: LatLng): Promise<never> {
      assertLatLng(point, 'point');
      throw noGeocoder();
    },
  };
}

function toMatrix(durations: (number | null)[][], distances: (number | null)[][], rows: number, columns: number): DistanceMatrix {
  const sized = (m: unknown[][]) => m.length === rows && m.every((row) => row.length === columns);
  if (!sized(durations) || !sized(distances)) {
    throw mappingProviderError('osrm', `answered a table that is not ${rows} × ${columns}`);
  }
  return {
    durations_seconds: durations.map((row, i) => row.map((v, j) => Math.round(cell(v, i, j)))),
    distances_meters: distances.map((row, i) => row.map((v, j) => cell(v, i, j))),
  };
}

/** OSRM answers null for a pair with no road between them: a fact about the map, not an engine failure. */
function cell(value: number | null, i: number, j: number): number {
  if (value === null) throw DomainError.unprocessable('NO_ROUTE', `no road route from origins[${i}] to destinations[${j}]`);
  return value;
}

/** OSRM wants `lng,lat`; six decimals is 0.1 m, finer than any road snap. */
function toOsrmCoordinate(point: LatLng): string {
  return `${Number(point.lng.toFixed(6))},${Number(point.lat.toFixed(6))}`;
}

function noGeocoder(): DomainError {
  return DomainError.unprocessable('GEOCODING_UNAVAILABLE', 'OSRM has no address data: connect a geocoding integration (nominatim)');
}
