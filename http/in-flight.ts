/**
 * Concurrent callers asking for the same key share one promise until it settles: when a cache entry expires under
 * load, fifty requests wait for one database load instead of running fifty. Nothing is kept after settling (a
 * failure is not remembered); what to cache is the caller's business.
 */
export class InFlight<K, V> {
  private readonly pending = new Map<K, Promise<V>>();

  /** The promise already running for `key`, else the one `start` returns (shared until it settles). */
  run(key: K, start: () => Promise<V>): Promise<V> {
    const running = this.pending.get(key);
    if (running) return running;
    const started = start();
    this.pending.set(key, started);
    const forget = () => {
      if (this.pending.get(key) === started) this.pending.delete(key);
    };
    started.then(forget, forget);
    return started;
  }

  /** Later callers start afresh; callers already waiting still get what they wait for. */
  clear(): void {
    this.pending.clear();
  }
}
