import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { Clock } from '../clock.ts';
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
  const lastWindow = new Map<string, number>();
  return {
    async driversMoved(siteId, userIds) {
      const window = etaWindowOf(deps.clock.now());
      const fresh = [...new Set(userIds)].filter((userId) => lastWindow.get(`${siteId}/${userId}`) !== window);
      if (fresh.length === 0) return;
      for (const userId of fresh) lastWindow.set(`${siteId}/${userId}`, window);
      const due = await inTenantScope(deps.orm, { siteId }, (em) =>
        em.execute<{ driver_user_id: string }[]>(
          `select distinct j.driver_user_id from job j
           where j.site_id = ? and j.driver_user_id in (?) and j.phase in ('assigned', 'in_progress') and j.deleted_at is null
             and exists (select 1 from eta_notification_config c where c.site_id = j.site_id and c.enabled)`,
          [siteId, fresh],
        ),
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
