import { Type, type TObject, type TSchema } from 'typebox';

export const INTEGRATION_CATEGORIES = ['email', 'payments', 'streaming', 'sms', 'push', 'notification', 'ai', 'mapping'] as const;
export type IntegrationCategory = (typeof INTEGRATION_CATEGORIES)[number];

/** Display metadata a config field schema carries beside its JSON Schema keywords. */
export type FieldMeta = { label: string; placeholder?: string; help_text?: string; secret?: boolean };

/**
 * OAuth providers: connect answers with the authorization URL (plus client id, redirect and a signed state); the
 * callback trades the code at the token URL with the client id and secret of these config fields, and keeps the
 * account the grant is for (`accountOf` reads it from the token answer).
 */
export type OAuthFlow = {
  authorizeUrl: string;
  tokenUrl: string;
  scope: string;
  clientIdField: string;
  clientSecretField: string;
  accountOf(answer: Record<string, unknown>): unknown;
};

/**
 * One provider a site can configure. `configSchema` is the single source of its config shape: validation, the
 * catalog's `config_schema` rows and which fields are encrypted (fields marked `secret`) all come from it.
 */
export type ProviderDefinition = {
  key: string;
  name: string;
  description: string;
  category: IntegrationCategory;
  configSchema: TObject;
  oauth?: OAuthFlow;
};

/** A config field: a TypeBox schema with its label, help and the `secret` mark (stored encrypted, never returned). */
export function field<T extends TSchema>(schema: T, meta: FieldMeta): T {
  return { ...schema, ...meta } as T;
}

/** The spec's "Config field" row for each property of a provider's schema. */
export type ConfigFieldView = {
  name: string;
  label: string;
  type: 'text' | 'password' | 'boolean' | 'number' | 'url' | 'email' | 'json';
  placeholder: string | null;
  help_text: string | null;
  required: boolean;
  secret: boolean;
};

/** Names of the fields of a schema marked `secret`. */
export function secretFields(schema: TObject): string[] {
  return Object.entries(schema.properties)
    .filter(([, property]) => (property as FieldMeta).secret === true)
    .map(([name]) => name);
}

/** The catalog's description of a schema's fields, in declaration order. */
export function toConfigFields(schema: TObject): ConfigFieldView[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const meta = property as FieldMeta & { type?: string; format?: string; description?: string; default?: unknown };
    return {
      name,
      label: meta.label ?? name,
      type: fieldType(meta),
      placeholder: meta.placeholder ?? (meta.default === undefined ? null : String(meta.default)),
      help_text: meta.help_text ?? meta.description ?? null,
      required: required.has(name),
      secret: meta.secret === true,
    };
  });
}

function fieldType(meta: FieldMeta & { type?: string; format?: string }): ConfigFieldView['type'] {
  if (meta.secret) return 'password';
  if (meta.type === 'boolean') return 'boolean';
  if (meta.type === 'integer' || meta.type === 'number') return 'number';
  if (meta.type === 'string' && meta.format === 'uri') return 'url';
  if (meta.type === 'string' && meta.format === 'email') return 'email';
  return meta.type === 'string' ? 'text' : 'json';
}

/** A strict object: unknown config keys are refused (a typo must not be silently ignored). */
export function configObject(properties: Record<string, TSchema>): TObject {
  return Type.Object(properties, { additionalProperties: false });
}
