import type { EntitySnapshot } from '../../machines/entity-machine.ts';

/** An actor held in memory: its machine snapshot and the row version it corresponds to. */
export type ActorEntry = { snapshot: EntitySnapshot; version: number; workflowId: string; lastUsedAt: number };

export type ActorRegistryOptions = {
  /** Most actors held at once; the least recently used go first. */
  maxActors: number;
  /** Actors unused for this long are evicted by `sweep`. */
  idleMs: number;
};

/**
 * The in-memory actors of every site, keyed `<site>:<entity>`. A cache, never the source of truth: a miss
 * rehydrates from the persisted snapshot, and a version mismatch drops the entry. Bounded by count (LRU: a Map
 * keeps insertion order, and a hit re-inserts) and by idle time.
 */
export class ActorRegistry {
  private readonly actors = new Map<string, ActorEntry>();

  constructor(private readonly options: ActorRegistryOptions) {}

  get(siteId: string, entityId: string, now: number): ActorEntry | undefined {
    const key = `${siteId}:${entityId}`;
    const entry = this.actors.get(key);
    if (!entry) return undefined;
    this.actors.delete(key);
    entry.lastUsedAt = now;
    this.actors.set(key, entry);
    return entry;
  }

  set(siteId: string, entityId: string, entry: ActorEntry): void {
    const key = `${siteId}:${entityId}`;
    this.actors.delete(key);
    this.actors.set(key, entry);
    while (this.actors.size > this.options.maxActors) {
      const oldest = this.actors.keys().next().value;
      if (oldest === undefined) break;
      this.actors.delete(oldest);
    }
  }

  drop(siteId: string, entityId: string): void {
    this.actors.delete(`${siteId}:${entityId}`);
  }

  /** Evicts actors idle for longer than `idleMs`; returns how many. */
  sweep(now: number): number {
    let evicted = 0;
    for (const [key, entry] of this.actors) {
      if (now - entry.lastUsedAt <= this.options.idleMs) break;
      this.actors.delete(key);
      evicted += 1;
    }
    return evicted;
  }

  get size(): number {
    return this.actors.size;
  }
}
