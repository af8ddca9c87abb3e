import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain-error.ts';
import { applyLocations, fixTimeProblem, type AppliedLocations, type LocationPing, type LocationVerdict } from './driver-location.ts';
import { answerInSlices, failAll, type Answer, type VerdictsCallback } from './driver-track-answers.ts';
import { TrackMemory, type TrackThrottle } from './driver-track.ts';
import type { TimedFix } from './driver-track-sql.ts';
import { createAppliedFeed, type AppliedListener } from './driver-track-feed.ts';
import { createPositionLogPruner } from './position-log-pruner.ts';

export type { AppliedListener } from './driver-track-feed.ts';

/** `waitsFrom`: when its window started (a fix arriving into silence: one window ago, so it is due at once). */
type Waiting = TimedFix & { waitsFrom: number; answer: Answer; index: number };
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
  /**
   * {@link apply} with a callback, for the socket path: no promise per event (with async hooks on, as the ORM's
   * request context has them, each promise also runs a hook and carries its context).
   */
  submit(siteId: string, userId: string, pings: LocationPing[], batch: boolean, done: VerdictsCallback): void;
  /** Listens for committed positions (coalesced: see `createAppliedFeed`). */
  onApplied(listener: AppliedListener): void;
  /** Commits what is waiting, waits for the transactions in flight, and refuses new fixes. */
  close(): Promise<void>;
};

/**
 * How long the first fix of a batch waits for others: bounds the transactions per second (≤ 500 per site). At 5,000
 * drivers a second, 2 ms instead of 4 took p50 ack latency from about 7 to 5 ms for ~10% more PostgreSQL CPU per fix.
 * A fix that arrives into silence (no fix for a window, no batch in flight) waits for nobody: it goes out at once,
 * as group commit runs a lone unit, since at rest no other fix is coming to share its commit.
 */
const WINDOW_MS = 2;
/**
 * Fixes per statement at most, and enough to start one without waiting for the window. Building a statement's
 * arguments and reading its rows each run in one go on the event loop (about 5–10 µs per fix): 250 keeps each under
 * ~2 ms, where 2,000 (after a stall let fixes pile up) held the loop for tens of milliseconds and every fix that
 * arrived meanwhile waited behind it. A backlog goes out as several statements, up to MAX_IN_FLIGHT at once.
 */
const MAX_BATCH = 250;
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
  /** Batches whose answers are still going out (committed, slot already free). */
  const answers = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  /** When the last fix arrived (`performance.now()`): one arriving a window later into an idle tracker goes at once. */
  let lastArrivalAt = -Infinity;

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

  /**
   * Runs a batch's statement, then frees its slot and its drivers (the verdicts are computed against the state before
   * it, so their next fixes may go out now) and answers its fixes after the commit, a slice per turn of the loop.
   */
  async function commit(site: SiteQueue, batch: Waiting[]): Promise<void> {
    let result: AppliedLocations;
    try {
      result = await applyLocations(options.orm, site.siteId, batch, options.throttle, memory);
    } catch (error) {
      options.logger.error({ err: error, site: site.siteId, fixes: batch.length }, 'location batch failed');
      failAll(batch, error, options.logger);
      return;
    } finally {
      for (const fix of batch) site.busy.delete(fix.userId);
    }
    feed.add(site.siteId, result.applied);
    pruner.committed(site.siteId);
    const answering = answerInSlices(batch, result.verdicts, options.logger).finally(() => answers.delete(answering));
    answers.add(answering);
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
        const due = site.waiting[0]!.waitsFrom + WINDOW_MS;
        if (due > now && site.waiting.length < MAX_BATCH && !closed) {
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

  function submit(siteId: string, userId: string, pings: LocationPing[], batch: boolean, done: VerdictsCallback): void {
    if (closed) return done(new Error('the location tracker is closed'), []);
    if (pings.length === 0) return done(null, []);
    // Each fix's time is parsed once, here: the statement takes epoch milliseconds.
    const nowMs = options.clock.now().getTime();
    const times: number[] = [];
    for (let index = 0; index < pings.length; index += 1) {
      const recordedAtMs = Date.parse(pings[index]!.recorded_at);
      const problem = fixTimeProblem(recordedAtMs, nowMs);
      if (problem) return done(new DomainError(400, 'INVALID_RECORDED_AT', `recorded_at ${problem}`, batch ? `${index}.recorded_at` : 'recorded_at'), []);
      times.push(recordedAtMs);
    }
    const site = siteQueue(siteId);
    const arrivedAt = performance.now();
    const quiet = inFlight.size === 0 && !timer && arrivedAt - lastArrivalAt >= WINDOW_MS;
    lastArrivalAt = arrivedAt;
    // Arriving into silence, the fix is due at once (its window counted as waited).
    const dueFrom = quiet ? arrivedAt - WINDOW_MS : arrivedAt;
    const answer: Answer = { verdicts: [], left: pings.length, done };
    for (let index = 0; index < pings.length; index += 1) site.waiting.push({ userId, ping: pings[index]!, recordedAtMs: times[index]!, waitsFrom: dueFrom, answer, index });
    if (quiet) pump();
    else if (!timer && inFlight.size < MAX_IN_FLIGHT) timer = setTimeout(pump, WINDOW_MS);
  }

  return {
    apply(siteId, userId, pings, batch = pings.length > 1) {
      return new Promise((resolve, reject) => submit(siteId, userId, pings, batch, (error, verdicts) => (error ? reject(error) : resolve(verdicts))));
    },
    submit,
    onApplied: (listener) => feed.listen(listener),
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      pump();
      while (inFlight.size > 0) await Promise.race(inFlight);
      await Promise.all(answers);
      await pruner.close();
      feed.close();
    },
  };
}
