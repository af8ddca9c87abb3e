import type { Logger } from 'pino';
import type { DriverFix } from './driver-location.ts';

/** Called with the fixes of a site that became current positions, in commit order. */
export type AppliedListener = (siteId: string, applied: DriverFix[]) => void;

/**
 * How often listeners hear about committed positions, per site. At 5,000 drivers a second the tracker commits
 * a couple of hundred batches a second; one live-feed message (and one Redis publish) and one ETA trigger pass per
 * batch cost more than the batch's own statement. Gathering them costs the dispatch map at most this much delay.
 */
export const FEED_INTERVAL_MS = 50;

export type AppliedFeed = {
  add(siteId: string, applied: DriverFix[]): void;
  listen(listener: AppliedListener): void;
  /** Tells the listeners what is still gathered, and stops. */
  close(): void;
};

/**
 * Gathers committed positions per site and hands them to the listeners every {@link FEED_INTERVAL_MS}, off the
 * acknowledgement path: every applied fix is passed on once, in commit order. A listener that throws is logged and
 * does not stop the others.
 */
export function createAppliedFeed(logger: Logger): AppliedFeed {
  const listeners: AppliedListener[] = [];
  let gathered = new Map<string, DriverFix[]>();
  let timer: NodeJS.Timeout | null = null;

  function deliver(): void {
    timer = null;
    const batches = gathered;
    gathered = new Map();
    for (const [siteId, applied] of batches) {
      for (const listener of listeners) {
        try {
          listener(siteId, applied);
        } catch (error) {
          logger.error({ err: error, site: siteId }, 'a listener of committed positions failed');
        }
      }
    }
  }

  return {
    add(siteId, applied) {
      if (applied.length === 0 || listeners.length === 0) return;
      const list = gathered.get(siteId);
      if (list) for (const fix of applied) list.push(fix);
      else gathered.set(siteId, applied.slice());
      timer ??= setTimeout(deliver, FEED_INTERVAL_MS);
    },
    listen: (listener) => void listeners.push(listener),
    close() {
      if (timer) clearTimeout(timer);
      deliver();
    },
  };
}
