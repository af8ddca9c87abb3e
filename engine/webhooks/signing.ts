import { createHmac } from 'node:crypto';

/**
 * Signatures of one webhook request. The key of both is the subscription's `secret_key` as UTF-8 bytes, exactly
 * as the receiver typed it:
 *
 * - `X-Webhook-Signature` (the API's own, see the spec's Events section): lowercase hex HMAC-SHA256 of the body.
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`): HMAC-SHA256 of
 *   `${id}.${timestamp}.${body}`, so a receiver can use any Standard Webhooks library. Those libraries expect a
 *   `whsec_<base64 key>` secret: the equivalent here is `whsec_` + base64(UTF-8 of secret_key), e.g. with the
 *   `standardwebhooks` package `new Webhook(Buffer.from(secret, 'utf8').toString('base64'))`. (Its
 *   `{format: 'raw'}` option with a string reads each character as one byte, which matches only for ASCII secrets.)
 *
 * The Standard Webhooks signature also covers the id and the timestamp, so a receiver that checks the timestamp's
 * age rejects a replayed request; the hex signature covers only the body.
 */
export type SignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature'?: string;
  'x-webhook-signature'?: string;
};

/** The lowercase hex HMAC-SHA256 of `body` (the `X-Webhook-Signature` value). */
export function hexSignature(secret: string, body: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/** The Standard Webhooks `v1,<base64>` signature of `${eventId}.${timestampSeconds}.${body}`. */
export function standardSignature(secret: string, eventId: string, timestampSeconds: number, body: Buffer): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(`${eventId}.${timestampSeconds}.`, 'utf8');
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

/**
 * The identification and signature headers for one attempt. `webhook-id` (the event id) and `webhook-timestamp`
 * are always sent so receivers can deduplicate; without a secret (the subscription has none: its owner chose
 * unsigned deliveries) no signature header is sent at all, rather than one a receiver could mistake for a check.
 *
 * @param timestampSeconds Unix seconds of this attempt (wall clock: receivers compare it with theirs).
 */
export function signatureHeaders(secret: string | null, eventId: string, timestampSeconds: number, body: Buffer): SignatureHeaders {
  const headers: SignatureHeaders = { 'webhook-id': eventId, 'webhook-timestamp': String(timestampSeconds) };
  if (secret === null || secret === '') return headers;
  headers['webhook-signature'] = standardSignature(secret, eventId, timestampSeconds, body);
  headers['x-webhook-signature'] = hexSignature(secret, body);
  return headers;
}
