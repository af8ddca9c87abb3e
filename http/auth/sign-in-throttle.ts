import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { DomainError } from '../../engine/domain-error.ts';
import { ApiError } from '../errors.ts';

/**
 * Failed sign-ins per account (email) and host (a site, or the platform host), counted by rate-limiter-flexible in
 * Redis when there is one (every process shares the count; in process otherwise, and as insurance if Redis fails).
 * The per-IP quota of anonymous calls does not stop password guessing against one account: an attacker spreads the
 * guesses over addresses, and each guess costs an Argon2 verification.
 *
 * Past `limit` failures in a window, sign-in of that account on that host answers 429 until the window ends, even
 * with the right password (else the attacker would learn it from the one 200 among the 429s). A successful sign-in
 * clears the count, so a user who mistypes now and then is never locked out.
 */
export class SignInThrottle {
  private readonly limiter: RateLimiterAbstract;
  private readonly policyHeader: string;

  constructor(
    redis: Redis | null,
    private readonly limit: number,
    windowSeconds: number,
    prefix: string,
  ) {
    const memory = new RateLimiterMemory({ points: limit, duration: windowSeconds, keyPrefix: `${prefix}:signin` });
    this.limiter = redis
      ? new RateLimiterRedis({ storeClient: redis, points: limit, duration: windowSeconds, keyPrefix: `${prefix}:signin`, insuranceLimiter: memory })
      : memory;
    this.policyHeader = `${limit};w=${windowSeconds}`;
  }

  /**
   * Runs `check` (the password check of a sign-in of `email` on the host of `siteId`, null for the platform host)
   * unless that account has run out of failures there.
   * @throws ApiError 429 RATE_LIMITED with Retry-After (seconds) when it has; else whatever `check` throws
   */
  async guard<T>(siteId: string | null, email: string, check: () => Promise<T>): Promise<T> {
    const key = `${siteId ?? 'platform'}:${email.toLowerCase()}`;
    // The attempt takes its point before the check, not after a failure: a burst of parallel guesses would all pass
    // a count read before any of them had failed.
    await this.limiter.consume(key).catch((rejection: unknown) => {
      throw rejection instanceof RateLimiterRes ? this.refusal(rejection) : rejection;
    });
    let result: T;
    try {
      result = await check();
    } catch (error) {
      // Only a wrong email or password keeps its point; a failure of ours (a database error) gives it back.
      if (!isWrongCredentials(error)) await this.limiter.reward(key);
      throw error;
    }
    await this.limiter.delete(key);
    return result;
  }

  private refusal(result: RateLimiterRes): ApiError {
    const reset = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    return ApiError.rateLimited(reset, {
      'ratelimit-limit': String(this.limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(reset),
      'ratelimit-policy': this.policyHeader,
    });
  }
}

/** Wrong email, wrong password and no profile on the host look alike to the caller, and all count. */
function isWrongCredentials(error: unknown): boolean {
  return error instanceof DomainError && error.code === 'INVALID_CREDENTIALS';
}
