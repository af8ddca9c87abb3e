import { DomainError } from '../domain-error.ts';
import type { MappingProvider } from './mapping-provider.ts';
import { isMappingProviderError } from './provider-error.ts';

const unmarked = <T>(result: T): T => result;

/**
 * `primary`, answered by `fallback` whenever `primary` fails as an engine (502 MAPPING_PROVIDER_ERROR: down, slow,
 * garbage). Input errors (400) and rule errors (422, e.g. NO_ROUTE) are the same whichever engine answers, so
 * they pass through unchanged. Results from the fallback say so in `answered_by`, so an ETA built on a
 * straight-line estimate is never mistaken for a road route.
 *
 * Geocoding: when the fallback has no address data either (the offline provider), the caller gets the primary's
 * 502, which says what actually went wrong, rather than the fallback's "no address data".
 */
export function withFallback(primary: MappingProvider, fallback: MappingProvider): MappingProvider {
  async function attempt<T>(call: (provider: MappingProvider) => Promise<T>, mark: (result: T, reason: string) => T): Promise<T> {
    try {
      return await call(primary);
    } catch (error) {
      if (!isMappingProviderError(error)) throw error;
      const reason = error.message;
      try {
        return mark(await call(fallback), reason);
      } catch (fallbackError) {
        if (fallbackError instanceof DomainError && fallbackError.code === 'GEOCODING_UNAVAILABLE') throw error;
        throw fallbackError;
      }
    }
  }
  const answeredBy = (reason: string) => ({ provider: fallback.name, fallback_reason: reason });

  return {
    name: primary.name,
    avoidFeatures: primary.avoidFeatures,
    // The fallback may not know the primary's road classes (the offline provider knows none): it ignores them.
    route: (request) => attempt((p) => p.route(p === fallback ? { ...request, avoid_features: [] } : request), (r, why) => ({ ...r, answered_by: answeredBy(why) })),
    matrix: (origins, destinations, mode) => attempt((p) => p.matrix(origins, destinations, mode), (m, why) => ({ ...m, answered_by: answeredBy(why) })),
    nearest: (point, mode) => attempt((p) => p.nearest(point, mode), unmarked),
    geocode: (query) => attempt((p) => p.geocode(query), unmarked),
    reverseGeocode: (point) => attempt((p) => p.reverseGeocode(point), unmarked),
  };
}
