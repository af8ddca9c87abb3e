import type { Redis } from 'ioredis';
import type { Principal } from './principal.ts';

const TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

type Entry = { principal: Principal; cachedUntil: number; context?: unknown };

/**
 * Resolved credentials by token hash, so an authenticated request needs no database round trip.
 * Entries live 30 s at most; any revocation, deactivation or role change clears the cache at once, in this process
 * and (with Redis) in every other process through a pub/sub channel.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private readonly channel: string;

  constructor(
    private readonly publisher: Redis | null,
    subscriber: Redis | null,
    prefix: string,
  ) {
    this.channel = `${prefix}:credentials:invalidate`;
    if (subscriber) {
      void subscriber.subscribe(this.channel);
      subscriber.on('message', (channel) => {
        if (channel === this.channel) this.entries.clear();
      });
    }
  }

  get(tokenHash: string, now: number): Entry | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.cachedUntil <= now) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return entry;
  }

  set(tokenHash: string, principal: Principal, now: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const until = Math.min(now + TTL_MS, principal.expiresAt ?? Number.POSITIVE_INFINITY);
    this.entries.set(tokenHash, { principal, cachedUntil: until });
  }

  /** Keeps a computed value (the auth context) beside a cached credential; it is dropped with it. */
  remember(tokenHash: string, context: unknown): void {
    const entry = this.entries.get(tokenHash);
    if (entry) entry.context = context;
  }

  /** Call after anything that could change what a credential may do. */
  async invalidate(): Promise<void> {
    this.entries.clear();
    if (this.publisher) await this.publisher.publish(this.channel, '1');
  }
}
