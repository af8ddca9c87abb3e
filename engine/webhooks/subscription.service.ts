import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { WebhookSubscriptionSchema, type WebhookSubscription } from '../../persistence/entities/webhook-subscription.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { newId } from '../../persistence/ids.ts';
import { DomainError } from '../domain-error.ts';
import { parseEventFilters } from './event-filter.ts';

export type WebhookSubscriptionInput = {
  url: string;
  events: string[];
  secret_key?: string;
  is_active?: boolean;
  description?: string;
};

/** Absent fields stay; `secret_key: ''` or `null` removes the secret; `description: null` clears it. */
export type WebhookSubscriptionPatch = Partial<Omit<WebhookSubscriptionInput, 'description' | 'secret_key'>> & { secret_key?: string | null; description?: string | null };

export type SubscriptionContext = {
  actor: AuditActor;
  siteId: string;
  crypto: FieldCrypto;
  now: Date;
  /** Registration-time URL safety check; returns the canonical URL, throws UnsafeWebhookUrlError. */
  assertUrl: (url: string) => Promise<URL>;
};

/** Shorter secrets are guessable offline from one signed body; the spec's examples use 32 random bytes in hex. */
export const MIN_SECRET_LENGTH = 16;

/**
 * Registers a subscription. The URL is stored as canonicalised by the safety check, so delivery dials the host that
 * was checked; the secret is stored encrypted, bound to this row. A subscription created inactive is `manual`.
 * @throws UnsafeWebhookUrlError 400, DomainError 400 INVALID_WEBHOOK_EVENT / WEBHOOK_SECRET_TOO_SHORT
 */
export async function createWebhookSubscription(
  em: EntityManager,
  ctx: SubscriptionContext,
  input: WebhookSubscriptionInput,
): Promise<WebhookSubscription> {
  const events = parseEventFilters(input.events);
  const secret = readSecret(input.secret_key);
  const url = await ctx.assertUrl(input.url);
  const id = newId('webhook');
  const active = input.is_active ?? true;
  const subscription = em.create(WebhookSubscriptionSchema, {
    id,
    siteId: ctx.siteId,
    url: url.href,
    events,
    secretCiphertext: secret ? encryptSecret(ctx, id, secret) : null,
    isActive: active,
    deactivatedAt: active ? null : ctx.now,
    deactivationReason: active ? null : 'manual',
    description: input.description ?? null,
    createdByUserId: ctx.actor.userId,
  });
  recordAudit(em, ctx.actor, { siteId: ctx.siteId, action: 'create', entityType: 'Webhook', entityId: id, before: null, after: webhookAuditView(subscription) });
  await em.flush();
  return subscription;
}

/** @throws DomainError 404 when absent or another site's */
export async function getWebhookSubscription(em: EntityManager, id: string): Promise<WebhookSubscription> {
  const subscription = await em.findOne(WebhookSubscriptionSchema, { id });
  if (!subscription) throw DomainError.notFound('Webhook', id);
  return subscription;
}

/**
 * Updates a subscription. The URL is checked again when it changes and when the subscription is reactivated (its
 * host may have moved while it was off). Reactivation clears the deactivation and replays nothing: events emitted
 * while inactive were never queued for it.
 * @throws DomainError 404, UnsafeWebhookUrlError 400, DomainError 400 INVALID_WEBHOOK_EVENT / WEBHOOK_SECRET_TOO_SHORT
 */
export async function updateWebhookSubscription(
  em: EntityManager,
  ctx: SubscriptionContext,
  id: string,
  patch: WebhookSubscriptionPatch,
): Promise<WebhookSubscription> {
  const subscription = await getWebhookSubscription(em, id);
  const before = webhookAuditView(subscription);
  const events = patch.events === undefined ? undefined : parseEventFilters(patch.events);
  const secret = patch.secret_key === undefined ? undefined : readSecret(patch.secret_key);
  const nextUrl = patch.url === undefined ? subscription.url : canonical(patch.url);
  const reactivating = patch.is_active === true && !subscription.isActive;
  if (nextUrl !== subscription.url || reactivating) subscription.url = (await ctx.assertUrl(nextUrl)).href;
  if (events) subscription.events = events;
  if (secret !== undefined) subscription.secretCiphertext = secret === null ? null : encryptSecret(ctx, id, secret);
  if (patch.description !== undefined) subscription.description = patch.description;
  if (reactivating) {
    subscription.isActive = true;
    subscription.deactivatedAt = null;
    subscription.deactivationReason = null;
  } else if (patch.is_active === false && subscription.isActive) {
    subscription.isActive = false;
    subscription.deactivatedAt = ctx.now;
    subscription.deactivationReason = 'manual';
  }
  const after = { ...webhookAuditView(subscription), ...(typeof secret === 'string' ? { signing_rotated: true } : {}) };
  recordAudit(em, ctx.actor, { siteId: ctx.siteId, action: 'update', entityType: 'Webhook', entityId: id, before, after });
  await em.flush();
  return subscription;
}

/** Deletes a subscription; its delivery log goes with it (foreign key cascade). @throws DomainError 404 */
export async function deleteWebhookSubscription(em: EntityManager, actor: AuditActor, siteId: string, id: string): Promise<void> {
  const subscription = await getWebhookSubscription(em, id);
  recordAudit(em, actor, { siteId, action: 'delete', entityType: 'Webhook', entityId: id, before: webhookAuditView(subscription), after: null });
  em.remove(subscription);
  await em.flush();
}

/**
 * What the audit log keeps of a subscription. Built by hand rather than with auditSnapshot so that neither the
 * secret nor its ciphertext ever reaches the audit writer; `signed` says whether one is set.
 */
export function webhookAuditView(s: WebhookSubscription): Record<string, unknown> {
  return {
    id: s.id,
    url: s.url,
    events: s.events,
    is_active: s.isActive,
    signed: s.secretCiphertext !== null && s.secretCiphertext !== undefined,
    description: s.description ?? null,
    deactivated_at: s.deactivatedAt?.toISOString() ?? null,
    deactivation_reason: s.deactivationReason ?? null,
  };
}

/** `''` means no secret (the spec's "empty string removes it"), and so does `null` (an update's three-state clear). */
function readSecret(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (value.length < MIN_SECRET_LENGTH) {
    throw DomainError.invalid('WEBHOOK_SECRET_TOO_SHORT', `secret_key needs at least ${MIN_SECRET_LENGTH} characters`, 'secret_key');
  }
  return value;
}

function encryptSecret(ctx: SubscriptionContext, rowId: string, secret: string): string {
  return ctx.crypto.encrypt(secret, { siteId: ctx.siteId, table: 'webhook_subscription', column: 'secret_ciphertext', rowId });
}

/** Canonical form for comparing with the stored URL; an unparsable one is left for the safety check to refuse. */
function canonical(url: string): string {
  return URL.canParse(url) ? new URL(url).href : url;
}
