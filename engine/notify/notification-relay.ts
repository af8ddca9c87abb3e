import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createBatchRelay, type BatchRelay } from '../queue/batch-relay.ts';
import { OUTLIVE_OUTAGES, type DurableQueue } from '../queue/durable-queue.ts';

/** The durable queue real-provider notifications are delivered from. */
export const NOTIFICATIONS_QUEUE = 'notifications';

/** Runs of a delivery job before its message is marked failed: enough to outlive an outage (`OUTLIVE_OUTAGES`, about 68 minutes). */
export const NOTIFICATION_ATTEMPTS = OUTLIVE_OUTAGES.attempts;

const BATCH_SIZE = 100;

export type NotificationRelay = BatchRelay;

/**
 * Moves committed pending notifications to {@link NOTIFICATIONS_QUEUE} (job id = the notification id) and stamps
 * `queued_at`, in one platform-scoped transaction that locks its rows (`FOR UPDATE SKIP LOCKED`). Like the outbox
 * relay: only committed messages are queued, and a crash between enqueueing and the commit re-queues the rows,
 * which the job id makes a no-op.
 *
 * Redis keeps nothing on disk, so a queued message's job can vanish (a Redis restart) or end without recording an
 * outcome (its last run could not write it): the message would stay pending for good. So, every 30 s (or every
 * `requeueGraceMs` when shorter), messages still pending `requeueGraceMs` after they were queued have their job
 * added again under the same id (a job still waiting or running is left alone; a finished one runs again) and
 * `queued_at` stamped anew, so each is looked at again only after another grace period. The handler sends only a
 * message still pending.
 */
export function createNotificationRelay(options: { orm: MikroORM; queue: DurableQueue; logger: Logger; requeueGraceMs: number; pollIntervalMs?: number }): NotificationRelay {
  const { orm, queue, logger, requeueGraceMs } = options;
  let lastSweep = 0;

  const relayBatch = (): Promise<number> =>
    inTenantScope(orm, { siteId: null, platform: true }, async (tx) => {
      const rows = await tx.execute<{ id: string; site_id: string }[]>(
        `select id, site_id from notification_message where status = 'pending' and queued_at is null
         order by created_at limit ? for update skip locked`,
        [BATCH_SIZE],
      );
      await queue.addMany(NOTIFICATIONS_QUEUE, jobsOf(rows), tx);
      if (rows.length > 0) await tx.execute('update notification_message set queued_at = now() where id in (?)', [rows.map((r) => r.id)]);
      return rows.length;
    });

  // The stamp commits first and the jobs are added after it, outside the transaction: the table queue's `requeue`
  // takes a connection of its own, and PGlite has only one, which the transaction would be holding. A process that
  // dies in between leaves the messages stamped: the next sweep after another grace period finds them again.
  const requeueStale = async (): Promise<number> => {
    const rows = await inTenantScope(orm, { siteId: null, platform: true }, async (tx) => {
      const stale = await tx.execute<{ id: string; site_id: string }[]>(
        `select id, site_id from notification_message
         where status = 'pending' and queued_at < now() - ? * interval '1 millisecond'
         order by queued_at limit ? for update skip locked`,
        [requeueGraceMs, BATCH_SIZE],
      );
      if (stale.length > 0) await tx.execute('update notification_message set queued_at = now() where id in (?)', [stale.map((r) => r.id)]);
      return stale;
    });
    if (rows.length === 0) return 0;
    await queue.requeue(NOTIFICATIONS_QUEUE, jobsOf(rows));
    logger.warn({ requeued: rows.length }, 'notifications still pending past the grace period: their queue jobs were added again');
    return rows.length;
  };

  const moveBatch = async (): Promise<number> => {
    if (Date.now() - lastSweep >= Math.min(requeueGraceMs, 30_000)) {
      lastSweep = Date.now();
      await requeueStale();
    }
    return relayBatch();
  };

  return createBatchRelay({
    moveBatch,
    batchSize: BATCH_SIZE,
    pollIntervalMs: options.pollIntervalMs ?? 500,
    onError: (error) => logger.error({ err: error }, 'notification relay pass failed; the messages stay pending for the next pass'),
  });
}

/** A message's delivery job: its id is the message's, so adding it again while it is alive does nothing. */
function jobsOf(rows: { id: string; site_id: string }[]) {
  return rows.map((row) => ({ name: 'send', data: { notification_id: row.id, site_id: row.site_id }, options: { jobId: row.id, ...OUTLIVE_OUTAGES } }));
}
