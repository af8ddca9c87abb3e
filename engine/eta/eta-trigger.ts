import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { inTenantRoundTrip } from '../drivers/tenant-round-trip.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';
import { ETA_QUEUE } from './eta-check.ts';

/** A driver's ETAs are re-checked at most once per this many seconds (of the engine clock). */
export const ETA_RECHECK_SECONDS = 15;

export type EtaTrigger = {
  /** Called after positions commit: queues an ETA check for each moved driver who may have something to be told. */
  driversMoved(siteId: string, userIds: string[]): Promise<void>;
};

/** The dedupe key of a driver's check in a throttle window: the same in every process. */
export function etaCheckJobId(siteId: string, driverUserId: string, window: number): string {
  return `eta.${siteId}.${driverUserId}.${window}`;
}

/** The throttle window an instant falls in. */
export function etaWindowOf(now: Date): number {
  return Math.floor(now.getTime() / (ETA_RECHECK_SECONDS * 1000));
}

/**
 * Throttled, durable ETA re-checks. Each driver gets at most one check per {@link ETA_RECHECK_SECONDS} window: a
 * per-process memory skips repeats cheaply (a 1 Hz stream costs one lookup per window, not per ping), and the
 * queue's job id (site, driver, window) dedupes across processes. The first fix of a window triggers the check
 * (leading edge); the check reads the driver's newest position when it runs. Only drivers with an assigned or
 * in-progress job on a site with an enabled notification config are queued (one statement per feed interval with new drivers).
 */
export function createEtaTrigger(deps: { orm: MikroORM; queue: DurableQueue; clock: Clock; logger: Logger }): EtaTrigger {
  /** Per site, each driver's last window: a lookup per moved driver builds no key. */
  const lastWindow = new Map<string, Map<string, number>>();
  return {
    async driversMoved(siteId, userIds) {
      const window = etaWindowOf(deps.clock.now());
      let seen = lastWindow.get(siteId);
      if (!seen) {
        seen = new Map();
        lastWindow.set(siteId, seen);
      }
      const fresh: string[] = [];
      for (const userId of userIds) {
        if (seen.get(userId) === window) continue;
        seen.set(userId, window);
        fresh.push(userId);
      }
      if (fresh.length === 0) return;
      // One round trip (tenant settings and the read as one implicit transaction), not an ORM transaction's four:
      // at a window's turn every moving driver is fresh, a read per feed interval.
      const due = await inTenantRoundTrip<{ driver_user_id: string }>(deps.orm, siteId, (literal) =>
        `select distinct j.driver_user_id from job j
         where j.site_id = ${literal(siteId)} and j.driver_user_id in (${fresh.map(literal).join(', ')})
           and j.phase in ('assigned', 'in_progress') and j.deleted_at is null
           and exists (select 1 from eta_notification_config c where c.site_id = j.site_id and c.enabled)`,
      );
      for (const { driver_user_id: driverUserId } of due) {
        await deps.queue.add(ETA_QUEUE, 'eta.check', { site_id: siteId, driver_user_id: driverUserId }, {
          jobId: etaCheckJobId(siteId, driverUserId, window),
          attempts: 3,
          backoffMs: 2000,
        });
      }
    },
  };
}
