import { Type, type TObject } from 'typebox';
import { NominatimConfigSchema } from '../mapping/nominatim-provider.ts';
import { OsrmConfigSchema } from '../mapping/osrm-provider.ts';
import { OfflineMappingConfigSchema } from '../mapping/offline-config.ts';
import { configObject, field, type IntegrationCategory, type ProviderDefinition } from './catalog.ts';

const NO_CONFIG = configObject({});

/** Configuration accepted and stored; this build has no delivery adapter for it yet (DESIGN: adapters come later). */
const CONFIG_ONLY = ' Configuration only in this build: no delivery adapter yet.';

/**
 * A road engine or geocoder: the adapters' own config schemas (engine/mapping) with the catalog's labels, and the
 * API key marked secret (stored encrypted). `extra` are the adapter's own settings (OSRM profiles, ...).
 */
const remoteEngine = (what: string, adapterSchema: TObject) => {
  const { base_url: _url, timeout_ms: _timeout, api_key: _key, fallback, offline, ...extra } = adapterSchema.properties;
  return configObject({
    base_url: field(Type.String({ format: 'uri', maxLength: 500 }), { label: 'Base URL', placeholder: `https://${what}.example.com` }),
    timeout_ms: Type.Optional(field(Type.Integer({ minimum: 50, maximum: 60_000, default: 5000 }), { label: 'Timeout (ms)' })),
    api_key: Type.Optional(field(Type.String({ minLength: 1, maxLength: 500 }), { label: 'API key', secret: true, help_text: 'sent to the engine as a bearer token if it needs one' })),
    ...(fallback ? { fallback: Type.Optional(field(fallback, { label: 'Fallback', help_text: 'offline: answer with the offline estimate when the engine fails' })) } : {}),
    ...(offline ? { offline: Type.Optional(field(offline, { label: 'Offline estimate settings', help_text: 'used by the fallback' })) } : {}),
    ...extra,
  });
};

/** What the OAuth callback stores for a connected account (the tokens encrypted, as every secret field). */
const OAUTH_GRANT_FIELDS = {
  account_id: Type.Optional(field(Type.String({ maxLength: 256 }), { label: 'Connected account', help_text: 'set when the OAuth authorization completes' })),
  access_token: Type.Optional(field(Type.String({ maxLength: 4096 }), { label: 'Access token', secret: true, help_text: 'set when the OAuth authorization completes' })),
  refresh_token: Type.Optional(field(Type.String({ maxLength: 4096 }), { label: 'Refresh token', secret: true, help_text: 'set when the OAuth authorization completes' })),
};

/** Every provider of the catalog (`GET /integration/available`), keyed by its integration key. */
export const PROVIDERS: readonly ProviderDefinition[] = [
  {
    key: 'mailbox',
    name: 'Development mailbox',
    description: 'Keeps mail in the database, readable by platform operators at GET /mailbox. The default of every site.',
    category: 'email',
    configSchema: NO_CONFIG,
  },
  {
    key: 'smtp',
    name: 'SMTP',
    description: 'Sends mail through any SMTP server (STARTTLS or implicit TLS, optional login).',
    category: 'email',
    configSchema: configObject({
      host: field(Type.String({ minLength: 1, maxLength: 253 }), { label: 'Host', placeholder: 'smtp.example.com' }),
      port: Type.Optional(field(Type.Integer({ minimum: 1, maximum: 65535, default: 587 }), { label: 'Port' })),
      secure: Type.Optional(field(Type.Boolean({ default: false }), { label: 'Implicit TLS', help_text: 'true for port 465; false upgrades with STARTTLS when offered' })),
      username: Type.Optional(field(Type.String({ maxLength: 256 }), { label: 'Username' })),
      password: Type.Optional(field(Type.String({ maxLength: 512 }), { label: 'Password', secret: true })),
      from_address: field(Type.String({ format: 'email', maxLength: 254 }), { label: 'From address', placeholder: 'dispatch@example.com' }),
      from_name: Type.Optional(field(Type.String({ maxLength: 100 }), { label: 'From name' })),
    }),
  },
  {
    key: 'development_payments',
    name: 'Development payments',
    description: 'Accepts payment method ids starting with pm_ and describes them (brand, last 4, expiry) without a network. The default of every site.',
    category: 'payments',
    configSchema: NO_CONFIG,
  },
  {
    key: 'stripe',
    name: 'Stripe Connect',
    description: `Connects the site's Stripe account with OAuth.${CONFIG_ONLY}`,
    category: 'payments',
    configSchema: configObject({
      client_id: field(Type.String({ minLength: 1, maxLength: 128 }), { label: 'Client id', placeholder: 'ca_...' }),
      secret_key: field(Type.String({ minLength: 1, maxLength: 256 }), { label: 'Secret key', secret: true }),
      publishable_key: Type.Optional(field(Type.String({ maxLength: 256 }), { label: 'Publishable key' })),
      ...OAUTH_GRANT_FIELDS,
    }),
    oauth: {
      authorizeUrl: 'https://connect.stripe.com/oauth/authorize',
      tokenUrl: 'https://connect.stripe.com/oauth/token',
      scope: 'read_write',
      clientIdField: 'client_id',
      clientSecretField: 'secret_key',
      accountOf: (answer) => answer.stripe_user_id,
    },
  },
  {
    key: 'kafka',
    name: 'Kafka',
    description: `Streams the site's events to a Kafka topic.${CONFIG_ONLY}`,
    category: 'streaming',
    configSchema: configObject({
      brokers: field(Type.String({ minLength: 1, maxLength: 1024 }), { label: 'Brokers', placeholder: 'broker1:9092,broker2:9092' }),
      topic: field(Type.String({ minLength: 1, maxLength: 249 }), { label: 'Topic' }),
      sasl_username: Type.Optional(field(Type.String({ maxLength: 256 }), { label: 'SASL username' })),
      sasl_password: Type.Optional(field(Type.String({ maxLength: 512 }), { label: 'SASL password', secret: true })),
    }),
  },
  {
    key: 'sms_outbox',
    name: 'Development SMS outbox',
    description: 'Keeps text messages in the notification outbox, readable by admins at GET /notification/outbox. The default of every site.',
    category: 'sms',
    configSchema: NO_CONFIG,
  },
  {
    key: 'twilio',
    name: 'Twilio',
    description: `Sends text messages through Twilio.${CONFIG_ONLY}`,
    category: 'sms',
    configSchema: configObject({
      account_sid: field(Type.String({ pattern: '^AC[0-9a-fA-F]{32}$' }), { label: 'Account SID' }),
      auth_token: field(Type.String({ minLength: 1, maxLength: 256 }), { label: 'Auth token', secret: true }),
      from_number: field(Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$' }), { label: 'From number', placeholder: '+15551234567' }),
    }),
  },
  {
    key: 'push_outbox',
    name: 'Development push outbox',
    description: 'Keeps push notifications in the notification outbox, readable by admins at GET /notification/outbox. The default of every site.',
    category: 'push',
    configSchema: NO_CONFIG,
  },
  {
    key: 'fcm',
    name: 'Firebase Cloud Messaging',
    description: `Sends push notifications to the driver and customer apps.${CONFIG_ONLY}`,
    category: 'push',
    configSchema: configObject({
      project_id: field(Type.String({ minLength: 1, maxLength: 128 }), { label: 'Project id' }),
      service_account_json: field(Type.String({ minLength: 2, maxLength: 16_384 }), { label: 'Service account JSON', secret: true }),
    }),
  },
  {
    key: 'slack',
    name: 'Slack',
    description: `Posts dispatch notifications to a Slack channel; connected with OAuth.${CONFIG_ONLY}`,
    category: 'notification',
    configSchema: configObject({
      client_id: field(Type.String({ minLength: 1, maxLength: 128 }), { label: 'Client id' }),
      client_secret: field(Type.String({ minLength: 1, maxLength: 256 }), { label: 'Client secret', secret: true }),
      channel: Type.Optional(field(Type.String({ maxLength: 80 }), { label: 'Channel', placeholder: '#dispatch' })),
      ...OAUTH_GRANT_FIELDS,
    }),
    oauth: {
      authorizeUrl: 'https://slack.com/oauth/v2/authorize',
      tokenUrl: 'https://slack.com/api/oauth.v2.access',
      scope: 'chat:write',
      clientIdField: 'client_id',
      clientSecretField: 'client_secret',
      accountOf: (answer) => (answer.team as { id?: unknown } | undefined)?.id,
    },
  },
  {
    key: 'openai',
    name: 'OpenAI-compatible API',
    description: `A chat-completions API for the assistant.${CONFIG_ONLY}`,
    category: 'ai',
    configSchema: configObject({
      api_key: field(Type.String({ minLength: 1, maxLength: 512 }), { label: 'API key', secret: true }),
      model: Type.Optional(field(Type.String({ minLength: 1, maxLength: 100, default: 'gpt-4o-mini' }), { label: 'Model' })),
      base_url: Type.Optional(field(Type.String({ format: 'uri', maxLength: 2048 }), { label: 'Base URL', placeholder: 'https://api.openai.com/v1' })),
    }),
  },
  {
    key: 'offline',
    name: 'Offline mapping',
    description: 'Great-circle distances with a road-detour factor and speed profiles per transport mode: no network, deterministic. The default of every site.',
    category: 'mapping',
    configSchema: OfflineMappingConfigSchema,
  },
  { key: 'osrm', name: 'OSRM', description: 'Road routing and distance matrices from an OSRM server.', category: 'mapping', configSchema: remoteEngine('osrm', OsrmConfigSchema) },
  { key: 'nominatim', name: 'Nominatim', description: 'Geocoding from a Nominatim server.', category: 'mapping', configSchema: remoteEngine('nominatim', NominatimConfigSchema) },
];

/** What a site uses in a category until it activates something else. */
export const DEVELOPMENT_DEFAULTS: Readonly<Partial<Record<IntegrationCategory, string>>> = {
  email: 'mailbox',
  payments: 'development_payments',
  sms: 'sms_outbox',
  push: 'push_outbox',
  mapping: 'offline',
};

const BY_KEY = new Map(PROVIDERS.map((provider) => [provider.key, provider]));

/** The catalog entry for an integration key, or undefined. */
export function findProvider(key: string): ProviderDefinition | undefined {
  return BY_KEY.get(key);
}
