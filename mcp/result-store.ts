import { randomBytes } from 'node:crypto';

export type StoredResult = { id: string; status: number; value: unknown; bytes: number; storedAt: number };

export type ResultStore = {
  /** Keeps `value` (whose JSON is `bytes` long) and returns its entry; evicts the least recently used to make room. */
  put(status: number, value: unknown, bytes: number): StoredResult;
  /** The entry, marked as recently used; undefined when unknown or evicted. */
  get(id: string): StoredResult | undefined;
  readonly size: number;
  readonly totalBytes: number;
};

export type ResultStoreLimits = { maxEntries: number; maxBytes: number };

export const DEFAULT_RESULT_STORE_LIMITS: ResultStoreLimits = { maxEntries: 50, maxBytes: 50 * 1024 * 1024 };

/** Thrown by `put` when one result alone exceeds the byte budget (it could never be kept). */
export class ResultTooLargeError extends Error {}

/**
 * In-memory storage of large API results for the life of the process, bounded in count and bytes so a long agent
 * session cannot grow without limit. Least recently used entries go first.
 */
export function createResultStore(limits: ResultStoreLimits = DEFAULT_RESULT_STORE_LIMITS): ResultStore {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, StoredResult>();
  let totalBytes = 0;

  const evictOldest = () => {
    const oldest = entries.values().next().value;
    if (!oldest) return;
    entries.delete(oldest.id);
    totalBytes -= oldest.bytes;
  };

  return {
    put(status, value, bytes) {
      if (bytes > limits.maxBytes) throw new ResultTooLargeError(`a result of ${bytes} bytes exceeds the store's ${limits.maxBytes} bytes`);
      while (entries.size >= limits.maxEntries || totalBytes + bytes > limits.maxBytes) evictOldest();
      const entry = { id: `res_${randomBytes(8).toString('hex')}`, status, value, bytes, storedAt: Date.now() };
      entries.set(entry.id, entry);
      totalBytes += bytes;
      return entry;
    },
    get(id) {
      const entry = entries.get(id);
      if (!entry) return undefined;
      entries.delete(id);
      entries.set(id, entry);
      return entry;
    },
    get size() {
      return entries.size;
    },
    get totalBytes() {
      return totalBytes;
    },
  };
}
