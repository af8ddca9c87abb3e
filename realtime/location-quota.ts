/**
 * A per-driver quota of location events: at most `perSecond` events in each whole second of `now()`, counted in this
 * process. A fixed window: each driver's counter is one small object, reset in place when its second is over, so a
 * steady stream allocates nothing per event (no timer per key and no promise per event, as rate-limiter-flexible's
 * memory store had: ~3% of the location path's CPU, and garbage that lived a second). Drivers who stopped sending are
 * swept once a minute. Like any fixed window it lets a driver send up to twice the quota across the turn of a
 * second; the previous limiter did the same across the turn of each driver's own window.
 */
export type LocationQuota = {
  /** Counts one event of `key`: null when it is within the quota, else the milliseconds until the next window. */
  take(key: string): number | null;
};

type Counter = { second: number; used: number };

const SWEEP_EVERY_SECONDS = 60;

export function createLocationQuota(perSecond: number, now: () => number = Date.now): LocationQuota {
  const counters = new Map<string, Counter>();
  let sweptAt = Math.floor(now() / 1000);

  function sweep(current: number): void {
    sweptAt = current;
    for (const [key, counter] of counters) if (counter.second < current) counters.delete(key);
  }

  return {
    take(key) {
      const at = now();
      const current = Math.floor(at / 1000);
      if (current - sweptAt >= SWEEP_EVERY_SECONDS) sweep(current);
      let counter = counters.get(key);
      if (!counter) {
        counter = { second: current, used: 0 };
        counters.set(key, counter);
      } else if (counter.second !== current) {
        counter.second = current;
        counter.used = 0;
      }
      counter.used += 1;
      return counter.used <= perSecond ? null : (current + 1) * 1000 - at;
    },
  };
}
