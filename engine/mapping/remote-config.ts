import { Type, type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { DomainError } from '../domain-error.ts';
import { OfflineMappingConfigSchema } from './offline-config.ts';

/** Long enough for a 100 × 100 table on a busy server, short enough that a dispatcher is not left waiting. */
export const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * The settings every remote engine shares (the integration catalog's base_url, timeout_ms and api_key), plus the
 * fallback choice. A site's integration config is free-form, so each adapter validates it here before any call.
 */
export const RemoteConfigFields = {
  base_url: Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 500, description: 'the engine root, e.g. http://osrm.internal:5000' }),
  timeout_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000, description: 'the whole exchange, default 5000' })),
  api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'sent as `Authorization: Bearer <api_key>`' })),
  fallback: Type.Optional(Type.Union([Type.Literal('offline'), Type.Literal('none')], { description: 'offline: answer with the offline estimate when the engine fails' })),
  offline: Type.Optional(OfflineMappingConfigSchema),
};

// Providers are built per request; compile each config schema once.
const validators = new WeakMap<TSchema, ReturnType<typeof Compile>>();

export type RemoteConfig = {
  baseUrl: string;
  timeoutMs: number;
  headers: Record<string, string>;
};

/**
 * Validates a remote engine's config against `schema`.
 * @throws DomainError 400 INVALID_MAPPING_CONFIG naming the first bad key
 */
export function validateMappingConfig<S extends TSchema>(schema: S, raw: unknown): Static<S> {
  let validator = validators.get(schema);
  if (!validator) validators.set(schema, (validator = Compile(schema)));
  if (validator.Check(raw)) return raw as Static<S>;
  const errors = validator.Errors(raw);
  const first = errors.find((e) => e.instancePath !== '') ?? errors[0];
  const field = first?.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'config';
  throw DomainError.invalid('INVALID_MAPPING_CONFIG', `mapping config ${field}: ${first?.message ?? 'invalid'}`, field);
}

/** The connection part of a validated config, with the trailing slash of the base URL dropped. */
export function toRemoteConfig(config: { base_url: string; timeout_ms?: number; api_key?: string }): RemoteConfig {
  return {
    baseUrl: config.base_url.replace(/\/+$/, ''),
    timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    headers: config.api_key ? { authorization: `Bearer ${config.api_key}` } : {},
  };
}
