import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from './errors.ts';

export type RateLimitDecision = { headers: Record<string, string> };

/**
 * Fixed-window request quotas per credential (rate-limiter-flexible): in Redis when there is one, so every process
 * shares the count, else in process. If Redis fails mid-flight the in-process limiter takes over (insurance)
 * rather than letting every request through or refusing them all.
 */
export class RateLimiter {
  private readonly limiter: RateLimiterAbstract;

  constructor(
    redis: Redis | null,
    private readonly points: number,
    private readonly windowSeconds: number,
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
  }

  /**
   * Counts one request against `key`.
   * @returns the RateLimit headers to send
   * @throws ApiError 429 RATE_LIMITED with the headers and an integer Retry-After >= 1
   */
  async consume(key: string): Promise<RateLimitDecision> {
    try {
      const result = await this.limiter.consume(key);
      return { headers: this.headers(result) };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw ApiError.rateLimited(retryAfter, this.headers(rejection));
    }
  }

  private headers(result: RateLimiterRes): Record<string, string> {
    return {
      'ratelimit-limit': String(this.points),
      'ratelimit-remaining': String(Math.max(0, result.remainingPoints)),
      'ratelimit-reset': String(Math.max(1, Math.ceil(result.msBeforeNext / 1000))),
      'ratelimit-policy': `${this.points};w=${this.windowSeconds}`,
    };
  }
}
