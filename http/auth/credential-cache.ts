import type { Redis } from 'ioredis';
import { InFlight } from '../in-flight.ts';
import type { Principal } from './principal.ts';

const TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;

/** `context` is the value computed from the credential (see `remembered`), once it has settled successfully. */
type Entry = { principal: Principal; cachedUntil: number; context?: Promise<unknown>; computed?: { value: unknown } };

/**
 * Resolved credentials by token hash, so an authenticated request needs no database round trip.
 * Entries live 30 s of wall time at most, on a monotonic clock rather than the engine's (on the simulator's
 * virtual clock 30 s pass in milliseconds); a token's own expiry is checked against the engine's clock on every
 * request by `authenticate`. Any revocation, deactivation or role change clears the cache at once, in this process
 * and (with Redis) in every other process through a pub/sub channel.
 *
 * A cached credential, and what was computed from it, can be read synchronously (`cached`, `computed`): on the hot
 * path every promise and `await` costs measurable CPU (Node's async-context hooks run for each one, process-wide,
 * once MikroORM's contexts are in use).
 *
 * Loads are shared: when an entry expires under load, the requests that miss it at once wait for one database
 * load instead of each running their own (50 connections used to mean 50 identical loads every 30 s). A load that
 * began before an invalidation is handed to its waiters but never cached, so a revoked credential cannot come back.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new InFlight<string, Principal>();
  private readonly computing = new InFlight<string, unknown>();
  private readonly channel: string;
  /** Bumped by every invalidation: a load or context computed under an older generation is not kept. */
  private generation = 0;
  private readonly clearListeners: (() => void)[] = [];

  constructor(
    private readonly publisher: Redis | null,
    subscriber: Redis | null,
    prefix: string,
  ) {
    this.channel = `${prefix}:credentials:invalidate`;
    if (subscriber) {
      void subscriber.subscribe(this.channel);
      subscriber.on('message', (channel) => {
        if (channel === this.channel) this.clear();
      });
    }
  }

  get(tokenHash: string): Entry | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.cachedUntil <= performance.now()) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return entry;
  }

  /**
   * The cached principal of a credential, else the result of `load` on the host of `siteId`, run once for all the
   * concurrent callers that miss on that host. A load's result is cached only if no invalidation happened while it
   * ran; a failed load is not cached.
   */
  async resolve(tokenHash: string, siteId: string | null, load: () => Promise<Principal>): Promise<Principal> {
    const cached = this.get(tokenHash)?.principal;
    if (cached) return cached;
    // Per host too: a request with this credential on a wrong host must not hand its 401 to one on the right host.
    const loadKey = `${siteId ?? ''} ${tokenHash}`;
    return this.loading.run(loadKey, () => {
      const generation = this.generation;
      return load().then((principal) => {
        if (this.generation === generation) this.set(tokenHash, principal);
        return principal;
      });
    });
  }

  set(tokenHash: string, principal: Principal): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(tokenHash, { principal, cachedUntil: performance.now() + TTL_MS });
  }

  /**
   * A value computed from a credential (the `/auth/me` body), kept with its cache entry and dropped with it.
   * Concurrent callers share one computation, also those that race an entry's expiry (they resolved the
   * credential just before it, so they find no entry here). After an invalidation everything is computed afresh.
   */
  remembered<T>(tokenHash: string, compute: () => Promise<T>): Promise<T> {
    const entry = this.get(tokenHash);
    if (entry?.context) return entry.context as Promise<T>;
    const computing = this.computing.run(tokenHash, compute);
    if (entry) {
      entry.context = computing;
      computing.then(
        (value) => {
          if (entry.context === computing) entry.computed = { value };
        },
        // A failure is not remembered: the next request computes again.
        () => {
          if (entry.context === computing) entry.context = undefined;
        },
      );
    }
    return computing as Promise<T>;
  }

  /** The principal of a cached credential, synchronously; undefined when `resolve` has to load it. */
  cached(tokenHash: string): Principal | undefined {
    return this.get(tokenHash)?.principal;
  }

  /** What `remembered` computed for a cached credential, once it is ready, synchronously; else undefined. */
  computed(tokenHash: string): unknown {
    return this.get(tokenHash)?.computed?.value;
  }

  /** Call after anything that could change what a credential may do. */
  async invalidate(): Promise<void> {
    this.clear();
    if (this.publisher) await this.publisher.publish(this.channel, '1');
  }

  /**
   * Runs `listener` whenever this cache is cleared, here or (through pub/sub) by another process: caches of facts
   * that change with credentials (the site directory: a deactivated site) ride on the same channel.
   */
  onClear(listener: () => void): void {
    this.clearListeners.push(listener);
  }

  private clear(): void {
    this.generation += 1;
    this.entries.clear();
    this.loading.clear();
    this.computing.clear();
    for (const listener of this.clearListeners) listener();
  }
}
