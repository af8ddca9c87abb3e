import polyline from '@mapbox/polyline';
import { Type, type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { mappingProviderError } from './provider-error.ts';
import { excerpt, type ProviderAnswer } from './provider-fetch.ts';
import type { NearestPoint, RouteGeometry, RouteLeg, RouteResult, RouteWaypoint } from './mapping-provider.ts';

/*
 * The parts of OSRM's v5 HTTP API answers (http://project-osrm.org/docs/v5.24.0/api/) we rely on. Anything that
 * does not match is the engine's fault and becomes a 502 naming the first field that is off.
 */

const Meters = Type.Number({ minimum: 0 });
const OsrmLeg = Type.Object({ distance: Meters, duration: Type.Number({ minimum: 0 }) });
const OsrmRoute = Type.Object({
  distance: Meters,
  duration: Type.Number({ minimum: 0 }),
  geometry: Type.String(),
  legs: Type.Array(OsrmLeg),
});
const OsrmRouteResponse = Type.Object({ code: Type.Literal('Ok'), routes: Type.Array(OsrmRoute, { minItems: 1 }) });
const Cell = Type.Union([Type.Number({ minimum: 0 }), Type.Null()]);
const OsrmTableResponse = Type.Object({
  code: Type.Literal('Ok'),
  durations: Type.Array(Type.Array(Cell)),
  distances: Type.Array(Type.Array(Cell)),
});
const OsrmNearestResponse = Type.Object({
  code: Type.Literal('Ok'),
  waypoints: Type.Array(
    Type.Object({
      location: Type.Tuple([Type.Number({ minimum: -180, maximum: 180 }), Type.Number({ minimum: -90, maximum: 90 })]),
      distance: Meters,
      name: Type.Optional(Type.String()),
    }),
    { minItems: 1 },
  ),
});
const OsrmError = Type.Object({ code: Type.String(), message: Type.Optional(Type.String()) });

export type OsrmRouteBody = Static<typeof OsrmRouteResponse>;
export type OsrmTableBody = Static<typeof OsrmTableResponse>;
type OsrmRouteJson = Static<typeof OsrmRoute>;

const checkRoute = Compile(OsrmRouteResponse);
const checkTable = Compile(OsrmTableResponse);
const checkNearest = Compile(OsrmNearestResponse);
const checkError = Compile(OsrmError);

/**
 * The body of a successful answer, or a 502 with OSRM's own code and message (`NoRoute: Impossible route between
 * points`) when it reports a failure, or with the first mismatched field when the body is not OSRM's format.
 */
export function readOsrmRoute(answer: ProviderAnswer): OsrmRouteBody {
  return readOsrm(answer, checkRoute);
}

export function readOsrmTable(answer: ProviderAnswer): OsrmTableBody {
  return readOsrm(answer, checkTable);
}

export function readOsrmNearest(answer: ProviderAnswer): NearestPoint {
  const body = readOsrm(answer, checkNearest);
  const [lng, lat] = body.waypoints[0]!.location;
  return { point: { lat, lng }, distance_meters: body.waypoints[0]!.distance, name: body.waypoints[0]!.name ?? '' };
}

/**
 * One OSRM route as our RouteResult: leg durations rounded to whole seconds (totals are the sums of the legs, as in
 * the offline provider), service times and ETAs laid out the same way, the polyline decoded to GeoJSON order.
 */
export function fromOsrmRoute(route: OsrmRouteJson, waypoints: RouteWaypoint[], departure?: Date): RouteResult {
  if (route.legs.length !== waypoints.length - 1) {
    throw mappingProviderError('osrm', `answered ${route.legs.length} legs for ${waypoints.length} waypoints`);
  }
  const legs: RouteLeg[] = [];
  let meters = 0;
  let travel = 0;
  let elapsed = 0;
  route.legs.forEach((leg, i) => {
    const seconds = Math.round(leg.duration);
    meters += leg.distance;
    travel += seconds;
    elapsed += (waypoints[i]!.service_seconds ?? 0) + seconds;
    const result: RouteLeg = {
      from: i,
      to: i + 1,
      distance_meters: leg.distance,
      duration_seconds: seconds,
      cumulative_distance_meters: meters,
      cumulative_duration_seconds: elapsed,
    };
    if (departure) {
      result.estimated_arrival_at = new Date(departure.getTime() + elapsed * 1000);
      result.estimated_completion_at = new Date(departure.getTime() + (elapsed + (waypoints[i + 1]!.service_seconds ?? 0)) * 1000);
    }
    legs.push(result);
  });
  const service = waypoints.reduce((sum, w) => sum + (w.service_seconds ?? 0), 0);
  return { distance_meters: meters, duration_seconds: travel, service_seconds: service, legs, geometry: decodeGeometry(route.geometry) };
}

function decodeGeometry(encoded: string): RouteGeometry {
  // polyline.decode gives [lat, lng] pairs; GeoJSON wants [lng, lat].
  return { type: 'LineString', coordinates: polyline.decode(encoded).map(([lat, lng]) => [lng, lat] as [number, number]) };
}

function readOsrm<T extends TSchema>(answer: ProviderAnswer, check: ReturnType<typeof Compile<T>>): Static<T> {
  const { status, body } = answer;
  if (status === 200 && check.Check(body)) return body as Static<T>;
  if (checkError.Check(body) && body.code !== 'Ok') {
    throw mappingProviderError('osrm', `HTTP ${status} ${body.code}${body.message ? `: ${body.message}` : ''}`);
  }
  if (status !== 200) throw mappingProviderError('osrm', `HTTP ${status}: ${excerpt(JSON.stringify(body))}`);
  const first = check.Errors(body)[0];
  const field = first?.instancePath || '(body)';
  throw mappingProviderError('osrm', `unexpected answer at ${field}: ${first?.message ?? 'not an OSRM response'}`);
}
