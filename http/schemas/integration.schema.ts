import { Type } from 'typebox';
import { INTEGRATION_CATEGORIES, toConfigFields, type ProviderDefinition } from '../../engine/integrations/catalog.ts';
import { MAX_REDIRECT_URL_LENGTH } from '../../engine/integrations/connect-state.ts';
import { publicConfig } from '../../engine/integrations/integration-config.ts';
import { findProvider } from '../../engine/integrations/providers.ts';
import type { SiteIntegration } from '../../persistence/entities/site-integration.entity.ts';
import { Id, Nullable, Timestamp } from './common.schema.ts';

export const IntegrationCategory = Type.Union([
  Type.Literal('email'),
  Type.Literal('payments'),
  Type.Literal('streaming'),
  Type.Literal('sms'),
  Type.Literal('push'),
  Type.Literal('notification'),
  Type.Literal('ai'),
  Type.Literal('mapping'),
]);
export const IntegrationKey = Type.String({ minLength: 1, maxLength: 64, description: 'a catalog key, e.g. smtp' });

const ConfigField = Type.Object(
  {
    name: Type.String(),
    label: Type.String(),
    type: Type.String({ description: 'text, password (a secret: stored encrypted, never returned), boolean, number, url, email or json' }),
    placeholder: Nullable(Type.String()),
    help_text: Nullable(Type.String()),
    required: Type.Boolean(),
    secret: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const AvailableIntegrationResponse = Type.Object(
  {
    key: Type.String(),
    name: Type.String(),
    description: Type.String(),
    category: IntegrationCategory,
    features: Type.Object({ has_onboarding: Type.Boolean({ description: 'connect answers with an OAuth authorization URL' }) }, { additionalProperties: false }),
    config_schema: Type.Array(ConfigField),
    is_default: Type.Boolean({ description: "what a site uses in this category until it activates another provider" }),
  },
  { additionalProperties: false },
);

export const SiteIntegrationResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    integration_key: Type.String(),
    category: IntegrationCategory,
    routing_key: Type.String({ description: 'opaque id of this integration in provider callbacks' }),
    config: Type.Record(Type.String(), Type.Unknown(), { description: 'plain settings; each secret field appears only as has_<field>: true|false' }),
    is_active: Type.Boolean(),
    status: Type.Union([Type.Literal('configured'), Type.Literal('pending_authorization'), Type.Literal('authorizing'), Type.Literal('connected')]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

const ConfigPatch = Type.Record(Type.String(), Type.Unknown(), {
  description: "the provider's fields (see config_schema): a value sets, an omitted field stays, null clears; for a secret, \"\" removes it",
});

export const UpdateIntegrationBody = Type.Object(
  { config: Type.Optional(ConfigPatch), is_active: Type.Optional(Type.Boolean({ description: 'true makes it the active provider of its category, deactivating the previous one' })) },
  { additionalProperties: false },
);

export const ConnectIntegrationBody = Type.Object(
  {
    integration_key: IntegrationKey,
    config: Type.Optional(ConfigPatch),
    redirect_url: Type.Optional(
      Type.String({ format: 'uri', maxLength: MAX_REDIRECT_URL_LENGTH, description: `where the user lands after the provider consent (OAuth providers); at most ${MAX_REDIRECT_URL_LENGTH} characters once URL-encoded` }),
    ),
  },
  { additionalProperties: false },
);

export const ConnectIntegrationResponse = Type.Object(
  {
    integration_data: SiteIntegrationResponse,
    provider_response: Type.Object(
      {
        connect_url: Nullable(Type.String({ description: "OAuth providers: the provider's authorization URL, with a signed state valid 15 minutes" })),
        redirect_url: Nullable(Type.String()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export function toAvailableIntegrationResponse(provider: ProviderDefinition, isDefault: boolean) {
  return {
    key: provider.key,
    name: provider.name,
    description: provider.description,
    category: provider.category,
    features: { has_onboarding: provider.oauth !== undefined },
    config_schema: toConfigFields(provider.configSchema),
    is_default: isDefault,
  };
}

export function toSiteIntegrationResponse(row: SiteIntegration) {
  return {
    id: row.id,
    site_id: row.siteId,
    integration_key: row.integrationKey,
    category: row.category as (typeof INTEGRATION_CATEGORIES)[number],
    routing_key: row.routingKey,
    config: publicConfig(row, findProvider(row.integrationKey)),
    is_active: row.isActive,
    status: row.status as 'configured' | 'pending_authorization' | 'authorizing' | 'connected',
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
