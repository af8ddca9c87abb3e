import { DomainError } from '../domain-error.ts';
import type { MappingProvider } from './mapping-provider.ts';
import { PUBLIC_ONLY, type MappingNetworkPolicy } from './network-policy.ts';
import type { OfflineMappingConfig } from './offline-config.ts';
import { withFallback } from './fallback-provider.ts';
import { createNominatimProvider } from './nominatim-provider.ts';
import { createOfflineProvider } from './offline-provider.ts';
import { createOsrmProvider } from './osrm-provider.ts';

/** The part of a site's integration record (spec "Integrations", category `mapping`) that picks the engine. */
export type SiteMappingIntegration = {
  integration_key: string;
  /** Free-form settings; each provider validates its own. */
  config: Record<string, unknown>;
  is_active: boolean;
};

type ProviderFactory = (config: Record<string, unknown>, policy: MappingNetworkPolicy) => MappingProvider;

/**
 * One entry per engine a site can connect, keyed by integration_key. Adding a road engine (OSRM first, DESIGN §8)
 * means one line here pointing at its `create*Provider(config)` (each validates its own config first); nothing else in the engine changes, because
 * callers only see {@link MappingProvider}.
 */
const PROVIDER_FACTORIES: Readonly<Record<string, ProviderFactory>> = {
  offline: (config) => createOfflineProvider(config),
  osrm: (config, policy) => withConfiguredFallback(createOsrmProvider(config, policy), config),
  nominatim: (config, policy) => withConfiguredFallback(createNominatimProvider(config, policy), config),
};

/** The integration keys a site can pick today. */
export const MAPPING_PROVIDER_KEYS = Object.keys(PROVIDER_FACTORIES);

/**
 * The provider for a site. With no mapping integration, or an inactive one, the site gets the offline provider
 * with its defaults, so dispatch and ETAs work on a fresh install with no network.
 *
 * @param integration the site's mapping integration (category `mapping`), or null when it has none
 * @param policy where a remote engine may live (default: public addresses only; see MappingNetworkPolicy)
 * @throws DomainError 422 MAPPING_PROVIDER_UNKNOWN for an integration_key with no provider in this build
 * @throws DomainError 400 INVALID_MAPPING_CONFIG when the provider rejects the integration's config
 */
export function createMappingProvider(integration: SiteMappingIntegration | null, policy: MappingNetworkPolicy = PUBLIC_ONLY): MappingProvider {
  if (!integration?.is_active) return createOfflineProvider();
  // Own properties only: a key such as "constructor" must not reach Object.prototype.
  const factory = Object.hasOwn(PROVIDER_FACTORIES, integration.integration_key)
    ? PROVIDER_FACTORIES[integration.integration_key]
    : undefined;
  if (!factory) {
    // Falling back to the offline estimate would hide a misconfigured site behind plausible-looking ETAs.
    throw DomainError.unprocessable(
      'MAPPING_PROVIDER_UNKNOWN',
      `no mapping provider "${integration.integration_key}"; available: ${MAPPING_PROVIDER_KEYS.join(', ')}`,
    );
  }
  return factory(integration.config, policy);
}

/** `fallback: 'offline'` in a remote engine's config: answer with the offline estimate (its `offline` settings) when it fails. */
function withConfiguredFallback(provider: MappingProvider, config: Record<string, unknown>): MappingProvider {
  if (config.fallback !== 'offline') return provider;
  return withFallback(provider, createOfflineProvider((config.offline ?? {}) as OfflineMappingConfig));
}
