import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, nextDelayMs, parseRetryAfter } from '../../engine/webhooks/retry-policy.ts';
import { hexSignature, signatureHeaders } from '../../engine/webhooks/signing.ts';

const SECRET = 'f3b1c0de9a8b7c6d5e4f30211203f4e5d6c7b8a9f0e1d2c3b4a5968778695a4b';
const BODY = Buffer.from('{"id":"obx_1","event":"job:create","timestamp":"2030-01-01T00:00:00.000Z","data":{"name":"Zoë"}}', 'utf8');

describe('webhook signatures', () => {
  it('X-Webhook-Signature is the lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the secret', () => {
    const expected = createHmac('sha256', SECRET).update(BODY).digest('hex');
    expect(hexSignature(SECRET, BODY)).toBe(expected);
    expect(signatureHeaders(SECRET, 'obx_1', 1_900_000_000, BODY)['x-webhook-signature']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the Standard Webhooks headers verify with the standardwebhooks library given whsec_ + base64(secret)', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders(SECRET, 'obx_1', now, BODY);
    const verifier = new Webhook(`whsec_${Buffer.from(SECRET, 'utf8').toString('base64')}`);
    expect(verifier.verify(BODY, headers as Record<string, string>)).toMatchObject({ id: 'obx_1', data: { name: 'Zoë' } });
    expect(() => verifier.verify(BODY, { ...headers, 'webhook-id': 'obx_2' } as Record<string, string>)).toThrow('No matching signature found');
    expect(() => verifier.verify(BODY, { ...headers, 'webhook-timestamp': String(now + 1) } as Record<string, string>)).toThrow('No matching signature found');
  });

  it('an unsigned subscription gets the id and timestamp but no signature header', () => {
    expect(signatureHeaders(null, 'obx_1', 1_900_000_000, BODY)).toEqual({ 'webhook-id': 'obx_1', 'webhook-timestamp': '1900000000' });
  });
});

describe('webhook retry policy', () => {
  const policy = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 8000, jitter: 0.2 };

  it('doubles from the base up to the ceiling, within ±jitter', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => nextDelayMs(policy, attempt, null, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(nextDelayMs(policy, 1, null, () => 0)).toBe(800);
    expect(nextDelayMs(policy, 1, null, () => 0.999_999)).toBe(1200);
  });

  it('follows a longer Retry-After exactly (up to the ceiling) but never retries sooner than the backoff', () => {
    expect(nextDelayMs(policy, 1, 5000, () => 0.5)).toBe(5000);
    expect(nextDelayMs(policy, 1, 60_000, () => 0.5)).toBe(8000);
    expect(nextDelayMs(policy, 3, 0, () => 0.5)).toBe(4000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Mon, 31 Dec 2029 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });

  it('spreads the default schedule over about a day', () => {
    const total = Array.from({ length: DEFAULT_RETRY_POLICY.maxAttempts - 1 }, (_, i) => nextDelayMs(DEFAULT_RETRY_POLICY, i + 1, null, () => 0.5)).reduce((a, b) => a + b, 0);
    expect(total / 3600_000).toBeGreaterThan(22);
    expect(total / 3600_000).toBeLessThan(26);
  });
});
