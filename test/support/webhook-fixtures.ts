import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Webhook } from 'standardwebhooks';
import { hexSignature } from '../../engine/webhooks/signing.ts';
import { AuditRecordSchema } from '../../persistence/entities/audit-record.entity.ts';
import { WebhookDeliverySchema, type WebhookDelivery } from '../../persistence/entities/webhook-delivery.entity.ts';
import { WebhookSubscriptionSchema, type WebhookSubscription } from '../../persistence/entities/webhook-subscription.entity.ts';
import type { FieldCrypto } from '../../persistence/field-crypto.ts';
import { newId } from '../../persistence/ids.ts';
import { insertAuditAndOutbox } from '../../persistence/outbox.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { ApiClient } from './http-client.ts';
import type { ReceivedRequest } from './webhook-receiver.ts';

/** Subscribes through the API (POST /api/webhook) and returns the subscription id. */
export async function subscribe(admin: ApiClient, url: string, events: string[], secret: string): Promise<string> {
  const response = await admin.post<{ data: { id: string } }>('/api/webhook', { url, events, secret_key: secret });
  if (response.status !== 201) throw new Error(`subscribe failed: ${response.status} ${response.text}`);
  return response.body.data.id;
}

/**
 * Writes a subscription row directly (encrypted secret bound to the row), for URLs the API refuses at registration
 * but delivery must still cope with (a host that stopped resolving).
 */
export async function insertSubscription(orm: MikroORM, crypto: FieldCrypto, siteId: string, url: string, events: string[], secret: string): Promise<string> {
  const id = newId('webhook');
  const binding = { siteId, table: 'webhook_subscription', column: 'secret_ciphertext', rowId: id };
  await inTenantScope(orm, { siteId }, async (em) => {
    em.create(WebhookSubscriptionSchema, { id, siteId, url, events, secretCiphertext: crypto.encrypt(secret, binding), isActive: true });
    await em.flush();
  });
  return id;
}

/** Commits `count` outbox events for the site in one transaction (as the command path writes them); returns their ids. */
export async function emitEvents(orm: MikroORM, siteId: string, count: number, event = 'job:create'): Promise<string[]> {
  const tag = randomBytes(4).toString('hex');
  const events = Array.from({ length: count }, (_, n) => ({
    siteId,
    event,
    entityType: 'job',
    entityId: `job_${tag}_${n}`,
    entityVersion: 1,
    data: { id: `job_${tag}_${n}`, n, note: 'héllo ✓' },
    timestamp: new Date(),
  }));
  await inTenantScope(orm, { siteId }, (em) => insertAuditAndOutbox(em, [], events));
  return inTenantScope(orm, { siteId }, async (em) => {
    const rows = await em.execute<{ id: string }[]>('select id from outbox where entity_id like ? order by seq', [`job_${tag}_%`]);
    return rows.map((row) => row.id);
  });
}

export function deliveriesOf(orm: MikroORM, siteId: string, subscriptionId: string): Promise<WebhookDelivery[]> {
  return inTenantScope(orm, { siteId }, (em) => em.find(WebhookDeliverySchema, { subscriptionId }, { orderBy: { eventId: 'asc', attempt: 'asc' } }));
}

export function subscriptionRow(orm: MikroORM, siteId: string, id: string): Promise<WebhookSubscription> {
  return inTenantScope(orm, { siteId }, (em) => em.findOneOrFail(WebhookSubscriptionSchema, { id }));
}

export function deactivationAudits(orm: MikroORM, siteId: string, id: string) {
  return inTenantScope(orm, { siteId }, (em) => em.find(AuditRecordSchema, { entityType: 'Webhook', entityId: id, action: 'deactivate' }));
}

/** Checks a request as a receiver would: the spec's hex signature (constant time) and the Standard Webhooks headers. */
export function verifyRequest(secret: string, headers: ReceivedRequest['headers'], body: Buffer): { hex: boolean; standard: boolean } {
  const sent = Buffer.from(String(headers['x-webhook-signature'] ?? ''), 'utf8');
  const expected = Buffer.from(hexSignature(secret, body), 'utf8');
  const hex = sent.length === expected.length && timingSafeEqual(sent, expected);
  let standard = true;
  try {
    new Webhook(Buffer.from(secret, 'utf8').toString('base64')).verify(body, {
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(headers['webhook-timestamp']),
      'webhook-signature': String(headers['webhook-signature']),
    });
  } catch {
    standard = false;
  }
  return { hex, standard };
}

/** The event id a request carries (its webhook-id header). */
export function eventIdOf(request: ReceivedRequest): string {
  return String(request.headers['webhook-id']);
}

/** Event ids the receiver acknowledged with a 2xx. */
export function acknowledged(requests: ReceivedRequest[], path?: string): Set<string> {
  return new Set(requests.filter((r) => r.status >= 200 && r.status < 300 && (!path || r.path === path)).map(eventIdOf));
}
