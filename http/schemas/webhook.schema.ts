import { Type } from 'typebox';
import type { WebhookDelivery } from '../../persistence/entities/webhook-delivery.entity.ts';
import type { WebhookSubscription } from '../../persistence/entities/webhook-subscription.entity.ts';
import { Clearable, Id, Nullable, Timestamp } from './common.schema.ts';

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'https only; the host must be, or resolve only to, public addresses (not localhost or private networks)',
});
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 20,
  description: 'event names (job:create, job:state_change, job:delete, stop:state_change, route:state_change, webhook:ping), entity:* for one entity, or * for all',
});
const SecretKey = Type.String({
  maxLength: 256,
  description: 'HMAC-SHA256 signing secret, at least 16 characters (a random 32-byte hex value is advised); never returned',
});
const Description = Type.String({ maxLength: 500 });

export const WebhookResponse = Type.Object(
  {
    id: Id,
    url: Type.String(),
    events: Type.Array(Type.String()),
    is_active: Type.Boolean(),
    has_secret: Type.Boolean({ description: 'whether deliveries are signed; the secret itself is never returned' }),
    description: Nullable(Type.String()),
    deactivated_at: Nullable(Timestamp),
    deactivation_reason: Nullable(Type.String({ description: 'manual, http_404, http_410, unresolvable_host, retries_exhausted' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    secret_key: Type.Optional(SecretKey),
    is_active: Type.Optional(Type.Boolean({ default: true })),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);

/** The subscription is named by `?id=` (per the spec), so the body carries only fields. */
export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    secret_key: Clearable(Type.String({ maxLength: 256, description: 'omit to keep, a new value replaces, "" or null removes' })),
    is_active: Type.Optional(Type.Boolean({ description: 'true reactivates a deactivated subscription; missed events are not replayed' })),
    description: Clearable(Description),
  },
  { additionalProperties: false },
);

export const WebhookDeliveryResponse = Type.Object(
  {
    id: Id,
    attempt: Type.Integer({ minimum: 1 }),
    event: Type.String(),
    event_id: Type.String({ description: 'stable across retries of one event (the webhook-id header)' }),
    status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('abandoned')]),
    duration_ms: Type.Integer(),
    response_status: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export function toWebhookResponse(s: WebhookSubscription) {
  return {
    id: s.id,
    url: s.url,
    events: s.events,
    is_active: s.isActive,
    has_secret: s.secretCiphertext !== null && s.secretCiphertext !== undefined,
    description: s.description ?? null,
    deactivated_at: s.deactivatedAt?.toISOString() ?? null,
    deactivation_reason: s.deactivationReason ?? null,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

export function toWebhookDeliveryResponse(d: WebhookDelivery) {
  return {
    id: d.id,
    attempt: d.attempt,
    event: d.event,
    event_id: d.eventId,
    status: d.status as 'succeeded' | 'failed' | 'abandoned',
    duration_ms: d.durationMs,
    response_status: d.responseStatus ?? null,
    error: d.error ?? null,
    created_at: d.createdAt.toISOString(),
  };
}
