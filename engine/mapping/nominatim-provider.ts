import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { DomainError } from '../domain-error.ts';
import { assertLatLng } from './mapping-input.ts';
import type { GeocodeMatch, LatLng, MappingProvider } from './mapping-provider.ts';
import { createOfflineProvider } from './offline-provider.ts';
import { PUBLIC_ONLY, type MappingNetworkPolicy } from './network-policy.ts';
import { mappingProviderError } from './provider-error.ts';
import { excerpt, fetchProviderJson, type ProviderAnswer } from './provider-fetch.ts';
import { RemoteConfigFields, toRemoteConfig, validateMappingConfig } from './remote-config.ts';

/** Nominatim's usage policy asks every client to name itself. */
const USER_AGENT = 'dispatch-engine/0.1 (mapping integration)';

export const NominatimConfigSchema = Type.Object(
  {
    ...RemoteConfigFields,
    max_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 40 })),
    /** Restricts search to these ISO 3166-1 alpha-2 codes (Nominatim's `countrycodes`). */
    country_codes: Type.Optional(Type.Array(Type.String({ pattern: '^[a-zA-Z]{2}$' }), { maxItems: 50 })),
    accept_language: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9,;=.* -]{1,100}$' })),
  },
  { additionalProperties: false },
);
export type NominatimConfig = Static<typeof NominatimConfigSchema>;

// Nominatim's jsonv2 place: coordinates come as decimal strings.
const Coordinate = Type.String({ pattern: '^-?\\d+(\\.\\d+)?$' });
const Place = Type.Object({ lat: Coordinate, lon: Coordinate, display_name: Type.String() });
const checkSearch = Compile(Type.Array(Place));
const checkPlace = Compile(Place);
const checkError = Compile(Type.Object({ error: Type.Union([Type.String(), Type.Object({ message: Type.String() })]) }));

/**
 * A Nominatim server (search and reverse, `format=jsonv2`) for addresses. Nominatim does not route, so routes,
 * matrices and snapping stay the offline estimate (configurable under `offline`); a site that wants road routes
 * connects OSRM instead.
 *
 * @param policy where the server may live (default: public addresses only)
 * @throws DomainError 400 INVALID_MAPPING_CONFIG when the config is malformed
 */
export function createNominatimProvider(raw: unknown, policy: MappingNetworkPolicy = PUBLIC_ONLY): MappingProvider {
  const config = validateMappingConfig(NominatimConfigSchema, raw);
  const remote = toRemoteConfig(config);
  const estimate = createOfflineProvider(config.offline);
  const get = (path: string, query: Record<string, string>) => {
    const url = new URL(`${remote.baseUrl}/${path}`);
    for (const [key, value] of Object.entries({ ...query, format: 'jsonv2' })) url.searchParams.set(key, value);
    if (config.accept_language) url.searchParams.set('accept-language', config.accept_language);
    return fetchProviderJson(url, { provider: 'nominatim', timeoutMs: remote.timeoutMs, headers: { 'user-agent': USER_AGENT, ...remote.headers }, policy });
  };

  return {
    name: 'nominatim',
    avoidFeatures: estimate.avoidFeatures,
    route: (request) => estimate.route(request),
    matrix: (origins, destinations, mode) => estimate.matrix(origins, destinations, mode),
    nearest: (point, mode) => estimate.nearest(point, mode),

    async geocode(query: string): Promise<GeocodeMatch[]> {
      if (typeof query !== 'string' || query.trim() === '' || query.length > 500) {
        throw DomainError.invalid('INVALID_GEOCODE_QUERY', 'query must be a non-empty string of at most 500 characters', 'query');
      }
      const params: Record<string, string> = { q: query.trim(), limit: String(config.max_results ?? 5) };
      if (config.country_codes?.length) params.countrycodes = config.country_codes.join(',').toLowerCase();
      const answer = await get('search', params);
      failOnError(answer);
      if (!checkSearch.Check(answer.body)) throw unexpected(answer, checkSearch.Errors(answer.body)[0]);
      return answer.body.map(toMatch);
    },

    async reverseGeocode(point: LatLng): Promise<GeocodeMatch | null> {
      assertLatLng(point, 'point');
      const answer = await get('reverse', { lat: String(point.lat), lon: String(point.lng) });
      // Nominatim answers a point with no address nearby (open sea) with 200 {"error": "Unable to geocode"}.
      if (answer.status === 200 && checkError.Check(answer.body) && /unable to geocode/i.test(errorText(answer.body))) return null;
      failOnError(answer);
      if (!checkPlace.Check(answer.body)) throw unexpected(answer, checkPlace.Errors(answer.body)[0]);
      return toMatch(answer.body);
    },
  };
}

function toMatch(place: Static<typeof Place>): GeocodeMatch {
  return { point: { lat: Number(place.lat), lng: Number(place.lon) }, label: place.display_name };
}

function failOnError(answer: ProviderAnswer): void {
  if (checkError.Check(answer.body)) throw mappingProviderError('nominatim', `HTTP ${answer.status}: ${errorText(answer.body)}`);
  if (answer.status !== 200) throw mappingProviderError('nominatim', `HTTP ${answer.status}: ${excerpt(JSON.stringify(answer.body))}`);
}

function errorText(body: { error: string | { message: string } }): string {
  return typeof body.error === 'string' ? body.error : body.error.message;
}

function unexpected(answer: ProviderAnswer, first: { instancePath: string; message: string } | undefined): DomainError {
  return mappingProviderError('nominatim', `unexpected answer at ${first?.instancePath || '(body)'}: ${first?.message ?? excerpt(JSON.stringify(answer.body))}`);
}
