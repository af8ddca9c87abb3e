import type { MikroORM } from '@mikro-orm/postgresql';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import type { Clock } from '../clock.ts';
import { OUTLIVE_OUTAGES, type DurableQueue, type NewJob } from '../queue/durable-queue.ts';
import type { DispatchPlan } from './dispatch-record.ts';
import { BULK_DUE, DISPATCH_QUEUE, ROUTE_DUE, type BulkDue, type RouteDue } from './scheduled-batch.ts';

/** Overdue records looked at per sweep: a larger backlog drains over the next sweeps. */
const SWEEP_LIMIT = 200;

type Overdue = { id: string; site_id: string; job_id: string | null; route_id: string | null; team_id: string | null; plan: DispatchPlan };

/**
 * The pending record is the truth of a scheduled dispatch; its queue job only wakes it. Redis keeps nothing on disk,
 * so after a Redis restart (or a job that ran out of its attempts during a long outage) a record could stay pending
 * for good, holding its job (one active dispatch per job: no auto dispatch, 409 ALREADY_DISPATCHED by hand). This
 * adds the due job again for every record still pending `graceMs` after its `dispatch_at`, under the id it was
 * scheduled with: a job still waiting or running is left alone (the id dedupes), a lost one is added, a finished one
 * runs again. The due handler reads the record and acts only while it is pending, so an extra run does nothing.
 * @returns how many queue jobs were (re)submitted
 */
export async function requeueOverdueDispatches(deps: { orm: MikroORM; queue: DurableQueue; clock: Clock }, graceMs: number): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - graceMs);
  const { rows, bulkIds } = await inTenantScope(deps.orm, { siteId: null, platform: true }, async (em) => {
    const overdue = await em.execute<Overdue[]>(
      `select id, site_id, job_id, route_id, team_id, plan from dispatch
       where status = 'pending' and is_active and dispatched_at is null and plan is not null and dispatch_at < ?
       order by dispatch_at limit ?`,
      [before, SWEEP_LIMIT],
    );
    const keys = [...new Set(overdue.flatMap((row) => (row.plan.bulk ? [row.plan.bulk.key] : [])))];
    // Every pending record of a bulk distribution, not only those within this sweep's limit: its one job carries them all.
    const members = keys.length === 0 ? [] : await em.execute<{ id: string; key: string }[]>(
      `select id, plan->'bulk'->>'key' as key from dispatch
       where status = 'pending' and is_active and dispatched_at is null and plan->'bulk'->>'key' in (?) order by id`,
      [keys],
    );
    const byKey = new Map<string, string[]>();
    for (const member of members) byKey.set(member.key, [...(byKey.get(member.key) ?? []), member.id]);
    return { rows: overdue, bulkIds: byKey };
  });
  const jobs = new Map<string, NewJob>();
  for (const row of rows) {
    if (!row.job_id && !row.route_id) continue;
    const job = dueJob(row, bulkIds.get(row.plan.bulk?.key ?? '') ?? [row.id]);
    jobs.set(job.options.jobId, job);
  }
  if (jobs.size > 0) await deps.queue.requeue(DISPATCH_QUEUE, [...jobs.values()]);
  return jobs.size;
}

/** The queue job the record was scheduled with (scheduled-dispatch.ts, scheduled-batch.ts), without `xid`: the record has committed. */
function dueJob(row: Overdue, bulkIds: string[]): NewJob {
  const options = { delayMs: 0, ...OUTLIVE_OUTAGES };
  const { bulk } = row.plan;
  if (bulk) {
    const data: BulkDue = {
      site_id: row.site_id, team_id: row.team_id ?? '', dispatch_ids: bulkIds, optimize_routes: bulk.optimize_routes, require_confirmation: row.plan.require_confirmation,
    };
    return { name: BULK_DUE, data, options: { ...options, jobId: `dispatch.${bulk.key}` } };
  }
  if (!row.job_id && row.route_id) {
    const data: RouteDue = { site_id: row.site_id, dispatch_id: row.id, route_id: row.route_id };
    return { name: ROUTE_DUE, data, options: { ...options, jobId: `dispatch.${row.id}` } };
  }
  return { name: 'dispatch.due', data: { site_id: row.site_id, dispatch_id: row.id, job_id: row.job_id ?? '' }, options: { ...options, jobId: `dispatch.${row.id}` } };
}
