import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain-error.ts';
import { applyLocations, fixTimeProblem, type LocationPing, type LocationVerdict } from './driver-location.ts';
import { TrackMemory, type TrackThrottle } from './driver-track.ts';
import type { TimedFix } from './driver-track-sql.ts';
import { createAppliedFeed, type AppliedListener } from './driver-track-feed.ts';
import { createPositionLogPruner } from './position-log-pruner.ts';

export type { AppliedListener } from './driver-track-feed.ts';

/** One `apply` call's answer: settled once every one of its fixes has its verdict (one promise per call, not per fix). */
type Answer = { verdicts: LocationVerdict[]; left: number; resolve(verdicts: LocationVerdict[]): void; reject(error: unknown): void };
type Waiting = TimedFix & { arrivedAt: number; answer: Answer; index: number };
/** A site's fixes waiting for a batch, and the drivers that have a batch in flight (their next fixes wait for it). */
type SiteQueue = { siteId: string; waiting: Waiting[]; busy: Set<string> };

/**
 * Group commit for streamed positions: fixes arriving within a few milliseconds share one statement and one commit,
 * so N drivers at 1 Hz cost a few hundred small transactions a second instead of N. Every fix goes through
 * {@link applyLocations}, the same function as the REST path; a fix is answered only after its transaction commits,
 * so an acknowledged fix is stored.
 */
export type LocationTracker = {
  /**
   * Applies a driver's fixes (one event, or an offline batch in order); resolves with one verdict per fix.
   * @param batch the fixes came as a batch (errors name `<index>.recorded_at`, also for a batch of one)
   * @throws DomainError 400 INVALID_RECORDED_AT (rejected, nothing applied) for a fix dated more than a minute ahead
   *   or at a time JavaScript cannot represent
   */
  apply(siteId: string, userId: string, pings: LocationPing[], batch?: boolean): Promise<LocationVerdict[]>;
  /** Listens for committed positions (coalesced: see `createAppliedFeed`). */
  onApplied(listener: AppliedListener): void;
  /** Commits what is waiting, waits for the transactions in flight, and refuses new fixes. */
  close(): Promise<void>;
};

/** How long the first fix of a batch waits for others: bounds the transactions per second (≤ 250 per site). */
const WINDOW_MS = 4;
/** Enough fixes to start a batch without waiting for the window. */
const FULL_BATCH = 500;
/** Fixes per statement at most (about 150 bytes of SQL each). */
const MAX_BATCH = 2000;
/**
 * Statements in flight at once, all sites together (each holds a pooled connection while PostgreSQL commits): under
 * load, the fixes that arrive during one commit go out in the next statement without waiting for the first.
 */
const MAX_IN_FLIGHT = 4;

export function createLocationTracker(options: { orm: MikroORM; logger: Logger; clock: Clock; throttle: TrackThrottle }): LocationTracker {
  const sites = new Map<string, SiteQueue>();
  const feed = createAppliedFeed(options.logger);
  const memory = new TrackMemory();
  const pruner = createPositionLogPruner(options.orm, options.logger);
  const inFlight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  /** The waiting fixes of drivers without a batch in flight, oldest first, up to MAX_BATCH; the others keep waiting. */
  function take(site: SiteQueue): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const taken = new Set<string>();
    const held = new Set<string>();
    for (const fix of site.waiting) {
      // Once a driver's fix stays behind, so do their later ones: a driver's fixes are applied in the order sent.
      const blocked = held.has(fix.userId) || (!taken.has(fix.userId) && site.busy.has(fix.userId)) || batch.length >= MAX_BATCH;
      if (blocked) {
        rest.push(fix);
        held.add(fix.userId);
      } else {
        batch.push(fix);
        taken.add(fix.userId);
      }
    }
    for (const userId of taken) site.busy.add(userId);
    site.waiting = rest;
    return batch;
  }

  async function commit(site: SiteQueue, batch: Waiting[]): Promise<void> {
    try {
      const result = await applyLocations(options.orm, site.siteId, batch, options.throttle, memory);
      batch.forEach((fix, i) => {
        const answer = fix.answer;
        answer.verdicts[fix.index] = result.verdicts[i]!;
        answer.left -= 1;
        if (answer.left === 0) answer.resolve(answer.verdicts);
      });
      feed.add(site.siteId, result.applied);
      pruner.committed(site.siteId);
    } catch (error) {
      options.logger.error({ err: error, site: site.siteId, fixes: batch.length }, 'location batch failed');
      for (const fix of batch) fix.answer.reject(error);
    } finally {
      for (const fix of batch) site.busy.delete(fix.userId);
    }
  }

  /**
   * Starts every batch that is due (its oldest fix waited the window, or it is full) while slots are free, one per
   * site in turn: a site that got a batch goes to the back of the line, so a busy site cannot starve the others.
   */
  function pump(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    const now = performance.now();
    let nextDue = Infinity;
    let started = true;
    while (started && inFlight.size < MAX_IN_FLIGHT) {
      started = false;
      for (const site of sites.values()) {
        if (site.waiting.length === 0) {
          if (site.busy.size === 0) sites.delete(site.siteId);
          continue;
        }
        const due = site.waiting[0]!.arrivedAt + WINDOW_MS;
        if (due > now && site.waiting.length < FULL_BATCH && !closed) {
          nextDue = Math.min(nextDue, due);
          continue;
        }
        const batch = take(site);
        if (batch.length === 0) continue; // every waiting driver has a batch in flight: its commit pumps again
        const running: Promise<void> = commit(site, batch).finally(() => {
          inFlight.delete(running);
          pump();
        });
        inFlight.add(running);
        sites.delete(site.siteId);
        sites.set(site.siteId, site);
        started = true;
        break;
      }
    }
    if (nextDue < Infinity && inFlight.size < MAX_IN_FLIGHT) timer = setTimeout(pump, Math.max(0, nextDue - now));
  }

  function siteQueue(siteId: string): SiteQueue {
    let site = sites.get(siteId);
    if (!site) {
      site = { siteId, waiting: [], busy: new Set() };
      sites.set(siteId, site);
    }
    return site;
  }

  return {
    apply(siteId, userId, pings, batch = pings.length > 1) {
      if (closed) return Promise.reject(new Error('the location tracker is closed'));
      if (pings.length === 0) return Promise.resolve([]);
      // Each fix's time is parsed once, here: the statement takes epoch milliseconds.
      const nowMs = options.clock.now().getTime();
      const times = pings.map((ping) => Date.parse(ping.recorded_at));
      for (const [index, recordedAtMs] of times.entries()) {
        const problem = fixTimeProblem(recordedAtMs, nowMs);
        if (problem) return Promise.reject(new DomainError(400, 'INVALID_RECORDED_AT', `recorded_at ${problem}`, batch ? `${index}.recorded_at` : 'recorded_at'));
      }
      const site = siteQueue(siteId);
      const arrivedAt = performance.now();
      return new Promise<LocationVerdict[]>((resolve, reject) => {
        const answer: Answer = { verdicts: [], left: pings.length, resolve, reject };
        pings.forEach((ping, index) => site.waiting.push({ userId, ping, recordedAtMs: times[index]!, arrivedAt, answer, index }));
        if (!timer && inFlight.size < MAX_IN_FLIGHT) timer = setTimeout(pump, WINDOW_MS);
      });
    },
    onApplied: (listener) => feed.listen(listener),
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      pump();
      while (inFlight.size > 0) await Promise.race(inFlight);
      await pruner.close();
      feed.close();
    },
  };
}
