import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createCoalescedTask, type CoalescedTask } from '../queue/coalesced-task.ts';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain-error.ts';
import { applyLocations, hasUsableTime, isFromTheFuture, type DriverFix, type LocationPing, type LocationVerdict } from './driver-location.ts';
import { TrackMemory, type TrackThrottle } from './driver-track.ts';

type Waiting = DriverFix & { resolve(verdict: LocationVerdict): void; reject(error: unknown): void };
type Lane = { siteId: string; queue: Waiting[]; task: CoalescedTask };

/** Called after a commit with the fixes that became current positions (in arrival order). */
export type AppliedListener = (siteId: string, applied: DriverFix[]) => void;

/**
 * Group commit for streamed positions: fixes arriving while a transaction runs wait for the next one, so N drivers
 * at 1 Hz cost a few transactions per second instead of N. Every fix goes through {@link applyLocations}, the same
 * function as the REST path; a fix is answered only after its transaction commits, so an acknowledged fix is stored.
 */
export type LocationTracker = {
  /**
   * Applies a driver's fixes (one event, or an offline batch in order); resolves with one verdict per fix.
   * @throws DomainError 400 INVALID_RECORDED_AT (rejected, nothing applied) for a fix dated more than a minute ahead
   *   or at a time JavaScript cannot represent
   */
  apply(siteId: string, userId: string, pings: LocationPing[]): Promise<LocationVerdict[]>;
  onApplied(listener: AppliedListener): void;
  /** Waits for the transactions in flight and refuses new fixes. */
  close(): Promise<void>;
};

/** Fixes per transaction: bounds one statement's parameters (7 per fix, twice; PostgreSQL allows 65,535). */
const MAX_BATCH = 2000;

/**
 * Transactions in flight per site. A driver always uses the same lane, so their fixes stay in order and two
 * transactions never write the same driver's rows; several lanes keep the database busy while one commits.
 */
const LANES = 4;

function laneOf(userId: string): number {
  let hash = 0;
  for (let i = 0; i < userId.length; i += 1) hash = (hash * 31 + userId.charCodeAt(i)) | 0;
  return Math.abs(hash) % LANES;
}

export function createLocationTracker(options: { orm: MikroORM; logger: Logger; clock: Clock; throttle: TrackThrottle }): LocationTracker {
  const lanes = new Map<string, Lane>();
  const listeners: AppliedListener[] = [];
  const memory = new TrackMemory();
  let closed = false;

  async function flush(lane: Lane): Promise<void> {
    const batch = lane.queue.splice(0, MAX_BATCH);
    if (lane.queue.length > 0) lane.task.trigger();
    if (batch.length === 0) return;
    const { siteId } = lane;
    try {
      const result = await inTenantScope(options.orm, { siteId }, (em) => applyLocations(em, siteId, batch, options.throttle, memory));
      batch.forEach((fix, i) => fix.resolve(result.verdicts[i]!));
      if (result.applied.length > 0) for (const listener of listeners) listener(siteId, result.applied);
    } catch (error) {
      options.logger.error({ err: error, site: siteId, fixes: batch.length }, 'location batch failed');
      for (const fix of batch) fix.reject(error);
    }
  }

  function laneFor(siteId: string, userId: string): Lane {
    const key = `${siteId}#${laneOf(userId)}`;
    let lane = lanes.get(key);
    if (!lane) {
      const created: Lane = { siteId, queue: [], task: createCoalescedTask(() => flush(created), (error) => options.logger.error({ err: error }, 'location flush failed')) };
      lanes.set(key, created);
      lane = created;
    }
    return lane;
  }

  return {
    apply(siteId, userId, pings) {
      if (closed) return Promise.reject(new Error('the location tracker is closed'));
      const now = options.clock.now();
      const bad = pings.findIndex((ping) => !hasUsableTime(ping) || isFromTheFuture(ping, now));
      if (bad >= 0) {
        const problem = hasUsableTime(pings[bad]!) ? 'is more than a minute in the future' : 'is not a representable time';
        const field = pings.length > 1 ? `${bad}.recorded_at` : 'recorded_at';
        return Promise.reject(new DomainError(400, 'INVALID_RECORDED_AT', `recorded_at ${problem}`, field));
      }
      const lane = laneFor(siteId, userId);
      const answers = pings.map((ping) => new Promise<LocationVerdict>((resolve, reject) => lane.queue.push({ userId, ping, resolve, reject })));
      lane.task.trigger();
      return Promise.all(answers);
    },
    onApplied: (listener) => listeners.push(listener),
    async close() {
      closed = true;
      await Promise.all([...lanes.values()].map((lane) => lane.task.stop()));
      for (const lane of lanes.values()) for (const fix of lane.queue.splice(0)) fix.reject(new Error('the location tracker closed'));
    },
  };
}
