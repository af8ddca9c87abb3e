import type { EntityManager } from '@mikro-orm/postgresql';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHANGES_HEAD_WITH_JOB, CHANGES_HEAD_WITH_OFFER, readSiteHead, type SiteHead } from '../../../engine/dispatch/driver-index-sync.ts';
import type { NamedStatement } from '../../../engine/dispatch/prepared-statement.ts';
import { preparedStatements } from '../../../engine/dispatch/prepared-statement.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { withAdmin } from '../../support/postgres.ts';
import { useOneSite } from '../../support/one-site.ts';
import { jobAt } from '../../http/dispatch-fixtures.ts';

/**
 * The dispatch head read runs a generic plan, made once per connection on the statistics of the moment and kept while
 * the site grows. Made while `job` and `driver_state` held a row or two and were never analyzed, every index leading
 * with `site_id` costs one row, and the planner used to take one that then filtered every job or driver of the site
 * by its `change_xid`, on each dispatch (migration 0032). One connection in the pool, so the plan explained is the
 * one made while the site was small.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000', DATABASE_POOL_SIZE: '1' });
const JOBS = 3000;
const DRIVERS = 1000;
let jobId: string;
/** A pool offer of that job: a claim's head read finds the job through it. */
let offerId: string;
/** The head read while the site had one job and no driver, and when its statements were prepared (so planned). */
let small: { head: SiteHead; preparedAt: Record<string, string> };

const PARIS = { lat: 48.8566, lng: 2.3522 };

const inAcme = <T>(work: (em: EntityManager) => Promise<T>) => inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, work);
const asAdmin = (sql: string, params: unknown[] = []) => withAdmin((admin) => admin.query(sql, params), site.server.database);

async function preparedAt(em: EntityManager, statement: NamedStatement): Promise<string> {
  const [row] = await em.execute<{ at: string }[]>('select prepare_time::text as at from pg_prepared_statements where name = ?', [statement.name]);
  return row!.at;
}

/** The two heads with a job, and how each names it: the job itself, or the pool offer a claim takes. */
const HEADS = [
  { statement: CHANGES_HEAD_WITH_JOB, target: () => jobId },
  { statement: CHANGES_HEAD_WITH_OFFER, target: () => offerId },
];

beforeAll(async () => {
  // No autovacuum analyze while the file runs: it would have the statement replanned on the grown tables.
  for (const table of ['job', 'driver_state', 'app_user']) await asAdmin(`alter table ${table} set (autovacuum_enabled = off)`);
  jobId = (await jobAt(site.acme.as.dispatcher, PARIS)).id;
  const posted = await site.acme.as.dispatcher.post<{ data: { succeeded: { id: string }[] } }>('/api/dispatch/pool', { job_ids: [jobId] });
  offerId = posted.body.data.succeeded[0]!.id;
  small = await inAcme(async (em) => {
    const head = await readSiteHead(em, site.acme.site.id, '1:1:', jobId);
    await readSiteHead(em, site.acme.site.id, '1:1:', undefined, { offerId });
    return { head, preparedAt: { [CHANGES_HEAD_WITH_JOB.name]: await preparedAt(em, CHANGES_HEAD_WITH_JOB), [CHANGES_HEAD_WITH_OFFER.name]: await preparedAt(em, CHANGES_HEAD_WITH_OFFER) } };
  });
}, 60_000);

/** EXPLAIN (ANALYZE, BUFFERS) of each head read with a job since `since`, with the plans made while the site was small. */
function explainHeads(since: string): Promise<string[]> {
  return inAcme(async (em) => {
    const plans: string[] = [];
    for (const { statement, target } of HEADS) {
      const [settings, execute] = await preparedStatements(em, statement, [since, site.acme.site.id, target()]);
      await em.execute(settings!);
      const rows = await em.execute<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${execute!}`);
      expect(await preparedAt(em, statement)).toBe(small.preparedAt[statement.name]);
      plans.push(rows.map((row) => row['QUERY PLAN']).join('\n'));
    }
    return plans;
  });
}

/**
 * Waits until every transaction that holds an xid from before this call has ended. Another test file's `CREATE
 * DATABASE` (a clone of the template, a second or so) holds an xid that pins every snapshot's xmin below this test's
 * inserts, and a head read since such a snapshot rightly reads those rows again.
 */
async function olderTransactionsEnded(): Promise<void> {
  const mark = BigInt((await asAdmin('select pg_current_xact_id()::text as xid')).rows[0].xid);
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const { rows } = await asAdmin('select pg_snapshot_xmin(pg_current_snapshot())::text as xmin');
    if (BigInt(rows[0].xmin) > mark) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('a transaction older than this test kept running for 10 s');
}

/** The most rows any node of `plan` read and threw away (by a filter or a join filter). */
const mostRemoved = (plan: string) => Math.max(0, ...[...plan.matchAll(/Rows Removed by (?:Join )?Filter: (\d+)/g)].map((match) => Number(match[1])));

describe('the dispatch head read, planned while the site was small', () => {
  it('finds the changed jobs by job_change_xid_idx once the site has thousands', async () => {
    await asAdmin(
      `insert into job (id, site_id, workflow_id, workflow_state_id, phase, snapshot, option_ids, created_at, updated_at)
       select j.id || '_' || g, j.site_id, j.workflow_id, j.workflow_state_id, 'completed', j.snapshot, j.option_ids, now(), now()
       from job j, generate_series(1, ${JOBS}) g where j.id = $1`,
      [jobId],
    );
    await olderTransactionsEnded();
    const grown = await inAcme((em) => readSiteHead(em, site.acme.site.id, small.head.snapshot, jobId));
    expect(grown.jobs).toHaveLength(JOBS);
    // Nothing changed since: the read should touch the index entries of the changes, not the site's jobs.
    const plans = await explainHeads(grown.snapshot);
    for (const plan of plans) {
      expect(plan).toContain('Index Scan using job_change_xid_idx on job j');
      expect(mostRemoved(plan)).toBeLessThan(100);
    }
    // The offer by its key, not by walking the site's dispatch records (an index leading with `site_id`).
    expect(plans[1]).toMatch(/Index Scan using dispatch_pkey on dispatch d\w* .*\n\s+Index Cond: \(id = \$3\)/);
  });

  it('finds the changed drivers by driver_state_change_xid_idx and each one’s actor by its key once the fleet has a thousand', async () => {
    await asAdmin(`insert into app_user (id, email, is_service_account, created_at, updated_at)
      select 'usr_head_' || g, 'head' || g || '@acme.example', true, now(), now() from generate_series(1, ${DRIVERS}) g`);
    await asAdmin(
      `insert into driver_state (site_id, user_id, availability, last_lat, last_lng, updated_at)
       select $1, 'usr_head_' || g, 'available', 48.85, 2.35, now() from generate_series(1, ${DRIVERS}) g`,
      [site.acme.site.id],
    );
    await olderTransactionsEnded();
    const grown = await inAcme((em) => readSiteHead(em, site.acme.site.id, small.head.snapshot, jobId));
    expect(grown.states).toHaveLength(DRIVERS);
    // One driver goes on break (a stamped change), another moves (a position log row).
    await asAdmin(`update driver_state set availability = 'on_break' where site_id = $1 and user_id = 'usr_head_5'`, [site.acme.site.id]);
    await asAdmin(`update driver_state set last_lat = 48.86 where site_id = $1 and user_id = 'usr_head_6'`, [site.acme.site.id]);
    const changed = await inAcme((em) => readSiteHead(em, site.acme.site.id, grown.snapshot, jobId));
    expect(changed.states.sort()).toEqual([
      ['usr_head_5', 'on_break', 48.85, 2.35],
      ['usr_head_6', 'available', 48.86, 2.35],
    ]);
    for (const plan of await explainHeads(grown.snapshot)) {
      expect(plan).toContain('Index Scan using driver_state_change_xid_idx on driver_state c');
      expect(plan).toMatch(/Index Scan using driver_state_pkey on driver_state d .*\n\s+Index Cond: \(\(site_id = s\.id\) AND \(user_id = /);
      expect(mostRemoved(plan)).toBeLessThan(100);
    }
  });
});
