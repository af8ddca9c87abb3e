import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { DomainError } from '../domain-error.ts';
import type { CommandContext } from '../engine.ts';
import { createCoalescedTask } from '../queue/coalesced-task.ts';
import { createDispatchBackoff, type DispatchBackoff } from './auto-dispatch-backoff.ts';
import type { DispatchDeps } from './dispatch-deps.ts';
import { updateDispatch } from './dispatch-record.ts';
import type { SiteStrategy } from './dispatch-types.ts';
import { requeueOverdueDispatches } from './scheduled-sweep.ts';
import { dispatchByStrategy } from './strategy-dispatch.ts';
import type { Clock } from '../clock.ts';

export type AutoDispatcher = { trigger(): void; runOnce(): Promise<void>; stop(): Promise<void> };

/** Jobs looked at per site per pass: a backlog drains over a few passes instead of one long one. */
const JOBS_PER_PASS = 50;

/**
 * Auto dispatch, and the closing of finished dispatches. The source of truth is the data, not a message: each
 * pass reads the sites with `auto_dispatch` on and their unassigned jobs without an active dispatch (most urgent
 * first for the priority strategy, else oldest first), and dispatches each with the site's strategy through the
 * command path as the system. Passes run after every command commit (coalesced) and every `pollMs`, in every
 * process: two processes racing for one job meet at the job's version check and the unique active-dispatch index,
 * and the loser finds the job dispatched. A job nobody can take now stays unassigned and is tried again after a
 * wait that doubles from 2 s to a minute (`auto-dispatch-backoff.ts`), so it does not hold back the jobs behind it.
 *
 * The same pass completes the open dispatches whose job reached a terminal phase: `processing` ones, and `pending`
 * ones (an offer in the pool, a dispatch awaiting the driver's confirmation, a scheduled one) that would otherwise
 * wait for good for a claim, an accept or a run that can no longer happen.
 *
 * And every 30 s (or every `requeueGraceMs` when shorter), it adds again the queue jobs of scheduled dispatches still
 * pending that long after their `dispatch_at` (`scheduled-sweep.ts`): Redis may have lost them.
 */
export function createAutoDispatcher(deps: DispatchDeps & { orm: MikroORM; logger: Logger; clock: Clock; requeueGraceMs: number; pollMs?: number }): AutoDispatcher {
  let autoSites = true;
  let lastSweep = 0;
  const backoff = createDispatchBackoff();
  const pass = async (): Promise<void> => {
    await completeFinished(deps);
    if (Date.now() - lastSweep >= Math.min(deps.requeueGraceMs, 30_000)) {
      lastSweep = Date.now();
      // A Redis outage fails the sweep, not auto dispatch: the next sweep tries again.
      const requeued = await requeueOverdueDispatches(deps, deps.requeueGraceMs).catch((error: unknown) => {
        deps.logger.error({ err: error }, 'overdue scheduled dispatch sweep failed');
        return 0;
      });
      if (requeued > 0) deps.logger.warn({ requeued }, 'scheduled dispatches overdue past the grace period: their queue jobs were added again');
    }
    const sites = await inTenantScope(deps.orm, { siteId: null, platform: true }, (em) =>
      em.execute<{ site_id: string; strategy: SiteStrategy }[]>('select site_id, strategy from dispatch_settings where auto_dispatch order by site_id'),
    );
    autoSites = sites.length > 0;
    for (const site of sites) await dispatchSite(deps, backoff, site.site_id, site.strategy);
  };
  const task = createCoalescedTask(pass, (error) => deps.logger.error({ err: error }, 'auto dispatch pass failed'));
  const timer = setInterval(() => task.trigger(), deps.pollMs ?? 1000);
  timer.unref();
  return {
    // Commits are frequent: only sites with auto dispatch on make them worth a pass.
    trigger: () => autoSites && task.trigger(),
    runOnce: pass,
    async stop() {
      clearInterval(timer);
      await task.stop();
    },
  };
}

const systemContext = (siteId: string, requestId: string): CommandContext => ({
  siteId,
  actor: { userId: null, applicationId: null, requestId, role: 'system' },
});

async function dispatchSite(deps: DispatchDeps & { orm: MikroORM }, backoff: DispatchBackoff, siteId: string, strategy: SiteStrategy): Promise<void> {
  const order = strategy === 'priority' ? 'deadline asc nulls last, j.created_at asc, j.id asc' : 'j.created_at asc, j.id asc';
  const jobs = await inTenantScope(deps.orm, { siteId }, (em) =>
    em.execute<{ id: string }[]>(
      `select j.id, (select min(s.complete_before) from stop s where s.job_id = j.id) as deadline from job j
       where j.site_id = ? and j.phase = 'unassigned' and j.deleted_at is null
         and not exists (select 1 from dispatch d where d.job_id = j.id and d.is_active and d.status <> 'completed')
         and j.id <> all(string_to_array(?, ','))
       order by ${order} limit ?`,
      [siteId, backoff.waiting(siteId).join(','), JOBS_PER_PASS],
    ),
  );
  for (const job of jobs) {
    try {
      await deps.engine.command(systemContext(siteId, 'auto-dispatch'), `job:${job.id}`, (scope) =>
        dispatchByStrategy(deps, scope, { jobId: job.id, strategy, method: 'auto', requireConfirmation: false }),
      );
      backoff.placed(siteId, job.id);
    } catch (error) {
      // Nobody eligible, a banned zone, or another process dispatched it first: the job waits a while (longer each
      // time), and the next passes look at the jobs behind it.
      if (!(error instanceof DomainError)) throw error;
      backoff.failed(siteId, job.id);
    }
  }
}

async function completeFinished(deps: DispatchDeps & { orm: MikroORM }): Promise<void> {
  const rows = await inTenantScope(deps.orm, { siteId: null, platform: true }, (em) =>
    em.execute<{ id: string; site_id: string; job_id: string }[]>(
      `select d.id, d.site_id, d.job_id from dispatch d join job j on j.id = d.job_id
       where d.status <> 'completed' and d.is_active and j.phase in ('completed', 'cancelled') order by d.created_at limit 100`,
    ),
  );
  for (const row of rows) {
    await deps.engine.command(systemContext(row.site_id, 'dispatch-complete'), `job:${row.job_id}`, (scope) =>
      updateDispatch(scope, row.id, { status: 'completed', completed_at: scope.clock.now() }, "status <> 'completed' and is_active", [], 'complete'),
    );
  }
}
