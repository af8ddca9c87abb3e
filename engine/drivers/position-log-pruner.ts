import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { inTenantRoundTrip, numberLiteral } from './tenant-round-trip.ts';

/**
 * How long `driver_position_change` rows are kept (migration 0020). The dispatch driver index reads the rows its last
 * snapshot does not see; a process that made no decision for longer than this reloads every position once.
 */
export const POSITION_LOG_RETENTION_SECONDS = 60;

/** How often a process prunes a site's log, at most (each pass deletes what aged out since the last). */
const PRUNE_EVERY_MS = 10_000;

export type PositionLogPruner = {
  /** Called after a site's positions committed: prunes its log when the last pass is old enough. */
  committed(siteId: string): void;
  /** Waits for the pass in flight, and starts no other. */
  close(): Promise<void>;
};

/**
 * Deletes a site's aged position log rows and records the newest transaction id deleted in
 * `driver_position_horizon`, in one statement: a reader whose snapshot may not have seen a deleted row then knows
 * it (see `readSiteHead`). Several processes may prune at once: a row is deleted once, and the horizon only grows.
 * One pass at a time per process, off the acknowledgement path; a failed pass is logged and tried again later.
 */
export function createPositionLogPruner(orm: MikroORM, logger: Logger): PositionLogPruner {
  const lastPass = new Map<string, number>();
  let running: Promise<void> | null = null;
  let closed = false;

  async function prune(siteId: string): Promise<void> {
    await inTenantRoundTrip(orm, siteId, (literal) => {
      const site = literal(siteId);
      return `with gone as (
          delete from driver_position_change
          where site_id = ${site} and created_at < now() - make_interval(secs => ${numberLiteral(POSITION_LOG_RETENTION_SECONDS)})
          returning change_xid)
        insert into driver_position_horizon as h (site_id, pruned_through)
        select ${site}, max(change_xid) from gone having count(*) > 0
        on conflict (site_id) do update set pruned_through = greatest(h.pruned_through, excluded.pruned_through)`;
    });
  }

  return {
    committed(siteId) {
      const now = performance.now();
      if (closed || running || now - (lastPass.get(siteId) ?? -Infinity) < PRUNE_EVERY_MS) return;
      lastPass.set(siteId, now);
      running = prune(siteId)
        .catch((error: unknown) => logger.error({ err: error, site: siteId }, 'pruning the position log failed'))
        .finally(() => {
          running = null;
        });
    },
    async close() {
      closed = true;
      await running;
    },
  };
}
