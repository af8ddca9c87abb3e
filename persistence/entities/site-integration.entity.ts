import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/**
 * A site's configuration of one catalog provider (`integration_key`). Plain settings live in `config`; each secret
 * field is stored apart in `secrets` as `{field: ciphertext}` (FieldCrypto, bound to this row and
 * `secrets.<field>`), so no secret is ever in a column in plain text. At most one row per category is active.
 */
export const SiteIntegrationSchema = defineEntity({
  name: 'SiteIntegration',
  tableName: 'site_integration',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    category: p.string(),
    integrationKey: p.string(),
    /** Opaque, unique across sites: names this integration in provider callbacks without revealing the site. */
    routingKey: p.string(),
    config: p.json<Record<string, unknown>>(),
    secrets: p.json<Record<string, string>>(),
    isActive: p.boolean().default(false),
    /** `configured`, `pending_authorization` (OAuth connect started) or `connected`. */
    status: p.string().default('configured'),
    ...timestamps(),
  },
});

export type SiteIntegration = InferEntity<typeof SiteIntegrationSchema>;
