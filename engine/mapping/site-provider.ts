import type { EntityManager } from '@mikro-orm/postgresql';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { activeIntegration } from '../integrations/active-integration.ts';
import { createMappingProvider } from './create-mapping-provider.ts';
import type { MappingProvider } from './mapping-provider.ts';
import type { MappingNetworkPolicy } from './network-policy.ts';

/**
 * The mapping provider a site uses now: its active `mapping` integration (offline, osrm or nominatim) with its
 * config (secrets decrypted), or the offline provider with defaults when it has none. Built per call, so a config
 * change applies to the next request without a cache to invalidate (building one is cheap: no network).
 *
 * @param em scoped to the site
 * @param policy where the site's engine may live (from the operator's configuration)
 * @throws DomainError 422 MAPPING_PROVIDER_UNKNOWN, 400 INVALID_MAPPING_CONFIG (see createMappingProvider)
 */
export async function mappingProviderForSite(em: EntityManager, crypto: FieldCrypto, siteId: string, policy: MappingNetworkPolicy): Promise<MappingProvider> {
  const integration = await activeIntegration(em, crypto, siteId, 'mapping');
  return createMappingProvider(integration ? { integration_key: integration.provider, config: integration.config, is_active: true } : null, policy);
}
