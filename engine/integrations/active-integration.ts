import type { EntityManager } from '@mikro-orm/postgresql';
import { SiteIntegrationSchema } from '../../persistence/entities/site-integration.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import type { IntegrationCategory } from './catalog.ts';
import { readFullConfig } from './integration-config.ts';

/** A provider as server-side code uses it: its key and its full config, secrets decrypted. */
export type ResolvedIntegration = { id: string; provider: string; config: Record<string, unknown> };

/**
 * The site's active provider in a category, with its config and secrets decrypted, for server-side use (never
 * return or log `config`). null when none is active: the category's development default applies
 * (`DEVELOPMENT_DEFAULTS`; for mapping, `createMappingProvider(null)`). `em` must be scoped to the site.
 */
export async function activeIntegration(
  em: EntityManager,
  crypto: FieldCrypto,
  siteId: string,
  category: IntegrationCategory,
): Promise<ResolvedIntegration | null> {
  const row = await em.findOne(SiteIntegrationSchema, { siteId, category, isActive: true });
  return row ? { id: row.id, provider: row.integrationKey, config: readFullConfig(crypto, row) } : null;
}

/** One configured provider of the site by key (active or not), decrypted; null when the site has none. */
export async function configuredIntegration(em: EntityManager, crypto: FieldCrypto, siteId: string, key: string): Promise<ResolvedIntegration | null> {
  const row = await em.findOne(SiteIntegrationSchema, { siteId, integrationKey: key });
  return row ? { id: row.id, provider: row.integrationKey, config: readFullConfig(crypto, row) } : null;
}
