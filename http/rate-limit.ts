import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from './errors.ts';

export type RateLimitDecision = { headers: Record<string, string> };

type Waiter = { resolve: (decision: RateLimitDecision) => void; reject: (error: unknown) => void };

/**
 * Fixed-window request quotas per credential (rate-limiter-flexible): in Redis when there is one, so every process
 * shares the count, else in process. If Redis fails mid-flight the in-process limiter takes over (insurance)
 * rather than letting every request through or refusing them all.
 *
 * Requests of one key that arrive while that key's Redis round trip is in flight are counted together by the next
 * one (INCRBY n instead of n INCRs): under load a busy key costs one round trip per batch, not per request, and
 * nothing is approximated. Every request still adds exactly 1 to the shared counter, and the requests of a batch
 * take the counts `total - n + 1 … total` in arrival order, so exactly the quota passes (in Redis and in process)
 * and the rest are refused, as with one INCR each. An idle key waits for nothing: its request goes out at once.
 */
export class RateLimiter {
  private readonly limiter: RateLimiterAbstract;
  /** Requests of a key waiting for that key's round trip in flight; a key is present while one is in flight. */
  private readonly queued = new Map<string, Waiter[]>();
  private readonly limitHeader: string;
  private readonly policyHeader: string;

  constructor(
    redis: Redis | null,
    private readonly points: number,
    windowSeconds: number,
    prefix: string,
  ) {
    const memory = new RateLimiterMemory({ points, duration: windowSeconds, keyPrefix: `${prefix}:rl` });
    this.limiter = redis
      ? new RateLimiterRedis({
          storeClient: redis,
          points,
          duration: windowSeconds,
          keyPrefix: `${prefix}:rl`,
          insuranceLimiter: memory,
        })
      : memory;
    this.limitHeader = String(points);
    this.policyHeader = `${points};w=${windowSeconds}`;
  }

  /**
   * Counts one request against `key`.
   * @returns the RateLimit headers to send
   * @throws ApiError 429 RATE_LIMITED with the headers and an integer Retry-After >= 1
   */
  consume(key: string): Promise<RateLimitDecision> {
    return new Promise((resolve, reject) => {
      const waiting = this.queued.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.send(key, [{ resolve, reject }]);
    });
  }

  /** One round trip for `batch`; whatever queued meanwhile goes out as the next batch when it returns. */
  private send(key: string, batch: Waiter[]): void {
    this.queued.set(key, []);
    this.limiter
      .consume(key, batch.length)
      .then(
        (result) => this.settle(batch, result),
        (rejection: unknown) => {
          if (rejection instanceof RateLimiterRes) this.settle(batch, rejection);
          else for (const waiter of batch) waiter.reject(rejection);
        },
      )
      .finally(() => {
        const next = this.queued.get(key)!;
        if (next.length > 0) this.send(key, next);
        else this.queued.delete(key);
      });
  }

  /** `result.consumedPoints` is the window's count after the batch: its requests were counts first+1 … total. */
  private settle(batch: Waiter[], result: RateLimiterRes): void {
    const first = result.consumedPoints - batch.length;
    const reset = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    for (const [index, waiter] of batch.entries()) {
      const count = first + index + 1;
      const headers = this.headers(count, reset);
      if (count <= this.points) waiter.resolve({ headers });
      else waiter.reject(ApiError.rateLimited(reset, headers));
    }
  }

  private headers(count: number, reset: number): Record<string, string> {
    return {
      'ratelimit-limit': this.limitHeader,
      'ratelimit-remaining': String(Math.max(0, this.points - count)),
      'ratelimit-reset': String(reset),
      'ratelimit-policy': this.policyHeader,
    };
  }
}
