import { Compile, type Validator } from 'typebox/compile';
import type { SiteIntegration } from '../../persistence/entities/site-integration.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { DomainError } from '../domain-error.ts';
import { secretFields, type ProviderDefinition } from './catalog.ts';

/**
 * A config change: a value sets a field, an omitted field stays, null clears it. For secret fields `""` also
 * removes the stored value, and `has_<secret>` keys (what responses show instead of secrets) are ignored, so a
 * config read back can be sent again unchanged.
 */
export type ConfigPatch = Record<string, unknown>;

const validators = new Map<string, Validator>();

/** The row's full config: plain fields plus every secret decrypted. For server-side use only, never a response. */
export function readFullConfig(crypto: FieldCrypto, row: SiteIntegration): Record<string, unknown> {
  const full: Record<string, unknown> = { ...row.config };
  for (const [name, ciphertext] of Object.entries(row.secrets)) full[name] = crypto.decrypt(ciphertext, binding(row, name));
  return full;
}

/**
 * Applies `patch` to the row: the merged config is validated against the provider's schema (defaults filled in),
 * then plain fields go to `config` and each secret field to `secrets`, encrypted and bound to this row and field.
 * @returns the secret fields whose value changed (set, replaced or removed)
 * @throws DomainError 400 INVALID_INTEGRATION_CONFIG naming the field (`config.<name>`); the value is never echoed
 */
export function applyConfigPatch(crypto: FieldCrypto, row: SiteIntegration, provider: ProviderDefinition, patch: ConfigPatch): string[] {
  const secrets = new Set(secretFields(provider.configSchema));
  const merged = readFullConfig(crypto, row);
  for (const [name, value] of Object.entries(patch)) {
    if (name.startsWith('has_') && secrets.has(name.slice(4))) continue;
    if (value === null || (value === '' && secrets.has(name))) delete merged[name];
    else merged[name] = value;
  }
  const valid = validate(provider, merged);
  const plain: Record<string, unknown> = {};
  const changed: string[] = [];
  const stored: Record<string, string> = {};
  const before = readFullConfig(crypto, row);
  for (const [name, value] of Object.entries(valid)) {
    if (!secrets.has(name)) {
      plain[name] = value;
      continue;
    }
    const secret = String(value);
    const unchanged = before[name] === secret && row.secrets[name] !== undefined;
    stored[name] = unchanged ? row.secrets[name]! : crypto.encrypt(secret, binding(row, name));
    if (!unchanged) changed.push(name);
  }
  for (const name of Object.keys(row.secrets)) if (!(name in stored)) changed.push(name);
  row.config = plain;
  row.secrets = stored;
  return changed;
}

/** What responses show of a config: the plain fields, and `has_<field>: true|false` for each secret field. */
export function publicConfig(row: SiteIntegration, provider: ProviderDefinition | undefined): Record<string, unknown> {
  const view: Record<string, unknown> = { ...row.config };
  const names = provider ? secretFields(provider.configSchema) : Object.keys(row.secrets);
  for (const name of names) view[`has_${name}`] = row.secrets[name] !== undefined;
  return view;
}

function validate(provider: ProviderDefinition, config: Record<string, unknown>): Record<string, unknown> {
  let validator = validators.get(provider.key);
  if (!validator) {
    validator = Compile(provider.configSchema);
    validators.set(provider.key, validator);
  }
  const withDefaults = validator.Default(structuredClone(config)) as Record<string, unknown>;
  if (validator.Check(withDefaults)) return withDefaults;
  const first = validator.Errors(withDefaults)[0];
  const params = (first?.params ?? {}) as { requiredProperties?: string[]; additionalProperties?: string[] };
  const path = (first?.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
  const child = params.requiredProperties?.[0] ?? params.additionalProperties?.[0];
  const name = [path, child].filter(Boolean).join('.') || 'config';
  const reason = params.requiredProperties ? 'is required' : params.additionalProperties ? 'is not a known field' : (first?.message ?? 'is invalid');
  throw DomainError.invalid('INVALID_INTEGRATION_CONFIG', `config.${name} ${reason} for ${provider.key}`, `config.${name}`);
}

function binding(row: SiteIntegration, name: string) {
  return { siteId: row.siteId, table: 'site_integration', column: `secrets.${name}`, rowId: row.id };
}
