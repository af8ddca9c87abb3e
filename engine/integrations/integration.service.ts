import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { SiteIntegrationSchema, type SiteIntegration } from '../../persistence/entities/site-integration.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { newId } from '../../persistence/ids.ts';
import { DomainError } from '../domain-error.ts';
import type { IntegrationCategory, ProviderDefinition } from './catalog.ts';
import { applyConfigPatch, type ConfigPatch } from './integration-config.ts';
import { findProvider } from './providers.ts';

export type IntegrationContext = { actor: AuditActor; siteId: string; crypto: FieldCrypto };

export type IntegrationUpdate = { config?: ConfigPatch; is_active?: boolean };

/** The catalog entry for a key. @throws DomainError 404 INTEGRATION_UNKNOWN naming `integration_key` */
export function requireProvider(key: string): ProviderDefinition {
  const provider = findProvider(key);
  if (!provider) throw new DomainError(404, 'INTEGRATION_UNKNOWN', `No integration "${key}" in the catalog`, 'integration_key');
  return provider;
}

/** The site's configured integrations, by category then key. */
export function listIntegrations(em: EntityManager, filter: { category?: string; integration_key?: string }): Promise<SiteIntegration[]> {
  const where = {
    ...(filter.category ? { category: filter.category } : {}),
    ...(filter.integration_key ? { integrationKey: filter.integration_key } : {}),
  };
  return em.find(SiteIntegrationSchema, where, { orderBy: { category: 'asc', integrationKey: 'asc' } });
}

/**
 * Creates or updates the site's configuration of one provider. The merged config is validated against the
 * provider's schema before anything is written; secrets are encrypted. `is_active: true` deactivates the category's
 * other provider in the same transaction (one active per category; writes to a category are serialized by a lock).
 * @throws DomainError 404 INTEGRATION_UNKNOWN, 400 INVALID_INTEGRATION_CONFIG naming the field
 */
export async function updateIntegration(em: EntityManager, ctx: IntegrationContext, key: string, update: IntegrationUpdate): Promise<SiteIntegration> {
  const provider = requireProvider(key);
  await lockCategory(em, ctx.siteId, provider.category);
  const existing = await em.findOne(SiteIntegrationSchema, { integrationKey: key });
  const row = existing ?? newRow(em, ctx.siteId, provider);
  const before = existing ? integrationAuditView(existing) : null;
  const rotated = applyConfigPatch(ctx.crypto, row, provider, update.config ?? {});
  if (update.is_active === true) await activate(em, ctx, row);
  if (update.is_active === false) row.isActive = false;
  const after = { ...integrationAuditView(row), ...(rotated.length > 0 ? { rotated_fields: rotated } : {}) };
  recordAudit(em, ctx.actor, { siteId: ctx.siteId, action: existing ? 'update' : 'create', entityType: 'Integration', entityId: row.id, before, after });
  await em.flush();
  return row;
}

/** Removes the site's configuration of a provider, secrets included. @throws DomainError 404 */
export async function deleteIntegration(em: EntityManager, ctx: IntegrationContext, key: string): Promise<SiteIntegration> {
  const provider = requireProvider(key);
  await lockCategory(em, ctx.siteId, provider.category);
  const row = await em.findOne(SiteIntegrationSchema, { integrationKey: key });
  if (!row) throw DomainError.notFound('Integration', key);
  recordAudit(em, ctx.actor, { siteId: ctx.siteId, action: 'delete', entityType: 'Integration', entityId: row.id, before: integrationAuditView(row), after: null });
  em.remove(row);
  await em.flush();
  return row;
}

/** Makes `row` its category's active provider, deactivating (and auditing) the one active before. */
export async function activate(em: EntityManager, ctx: IntegrationContext, row: SiteIntegration): Promise<void> {
  const others = await em.find(SiteIntegrationSchema, { category: row.category, isActive: true, id: { $ne: row.id } });
  for (const other of others) {
    const before = integrationAuditView(other);
    other.isActive = false;
    recordAudit(em, ctx.actor, {
      siteId: ctx.siteId,
      action: 'update',
      entityType: 'Integration',
      entityId: other.id,
      before,
      after: { ...integrationAuditView(other), replaced_by: row.integrationKey },
    });
  }
  // The partial unique index checks each row as it is written: the old one must be off before the new one is on.
  await em.flush();
  row.isActive = true;
}

/** Serializes writes to one site's category, so two activations cannot both win (the unique index backs it). */
export async function lockCategory(em: EntityManager, siteId: string, category: IntegrationCategory | string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtext(?))', [`integration:${siteId}:${category}`]);
}

/**
 * What the audit log keeps of an integration: plain settings and the names of the encrypted fields, never a
 * secret nor its ciphertext.
 */
export function integrationAuditView(row: SiteIntegration): Record<string, unknown> {
  return {
    id: row.id,
    integration_key: row.integrationKey,
    category: row.category,
    is_active: row.isActive,
    status: row.status,
    config: row.config,
    encrypted_fields: Object.keys(row.secrets).sort(),
  };
}

function newRow(em: EntityManager, siteId: string, provider: ProviderDefinition): SiteIntegration {
  return em.create(SiteIntegrationSchema, {
    id: newId('integration'),
    siteId,
    category: provider.category,
    integrationKey: provider.key,
    routingKey: `rk_${randomBytes(16).toString('base64url')}`,
    config: {},
    secrets: {},
    isActive: false,
    status: 'configured',
  });
}
