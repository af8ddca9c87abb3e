/**
 * When a failed delivery is tried again. Retries are scheduled by the delivery worker itself (a new delayed job per
 * attempt) rather than by the queue's own backoff, so the delay can follow the receiver's `Retry-After` and carry
 * jitter, and every attempt is a row of its own in `webhook_delivery`.
 */
export type RetryPolicy = {
  /** Attempts in all, the first included; after the last failure the subscription is deactivated. */
  maxAttempts: number;
  /** Delay after the first failure (ms); it doubles after each further failure. */
  baseDelayMs: number;
  /** Ceiling of the doubling delay, and of any Retry-After we follow (ms). */
  maxDelayMs: number;
  /** Spread of each delay: ±jitter (0.2: 80 % to 120 % of the nominal delay). */
  jitter: number;
};

/**
 * 30 s, 1 min, 2 min … doubling up to 4 h, 15 attempts: the last attempt comes about 24 h after the first
 * (30 s·(2^9 − 1) ≈ 4.3 h for the doubling part, then five 4 h waits), so a receiver down for most of a day still
 * gets every event. The ±20 % jitter spreads the retries of the many events that failed together when a receiver
 * went down, so they do not all come back at the same second when it returns.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 15, baseDelayMs: 30_000, maxDelayMs: 4 * 3600_000, jitter: 0.2 };

/**
 * The wait before attempt `failedAttempt + 1` (ms). A `Retry-After` longer than the backoff is followed exactly (up to
 * `maxDelayMs`); a shorter one does not bring the retry forward, so a receiver answering `Retry-After: 0` cannot burn
 * the whole retry budget in seconds.
 *
 * @param failedAttempt the attempt that just failed (1 for the first)
 * @param retryAfterMs the receiver's `Retry-After`, parsed (null when absent or unreadable)
 * @param random a number in [0, 1) (injected for tests)
 */
export function nextDelayMs(policy: RetryPolicy, failedAttempt: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  const nominal = Math.min(policy.baseDelayMs * 2 ** Math.max(0, failedAttempt - 1), policy.maxDelayMs);
  const jittered = Math.round(nominal * (1 - policy.jitter + 2 * policy.jitter * random()));
  if (retryAfterMs === null || retryAfterMs <= jittered) return jittered;
  return Math.min(retryAfterMs, policy.maxDelayMs);
}

/**
 * Reads a `Retry-After` header (RFC 9110: delay-seconds or an HTTP date) as milliseconds from `nowMs`; null when
 * absent or unreadable. A date in the past reads as 0.
 */
export function parseRetryAfter(header: string | string[] | undefined, nowMs: number): number | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}
