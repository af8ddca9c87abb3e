import type { EntityManager } from '@mikro-orm/postgresql';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHANGES_HEAD_WITH_JOB, readSiteHead } from '../../../engine/dispatch/driver-index-sync.ts';
import { preparedStatements } from '../../../engine/dispatch/prepared-statement.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { withAdmin } from '../../support/postgres.ts';
import { useOneSite } from '../../support/one-site.ts';
import { jobAt } from '../../http/dispatch-fixtures.ts';

/**
 * The dispatch head read runs a generic plan, made once per connection on the statistics of the moment and kept while
 * the site grows. Made while `job` held one job and was never analyzed, every index leading with `site_id` costs one
 * row, and the planner took `job_site_driver_idx`, then filtered every job of the site by its `change_xid` on each
 * dispatch (migration 0032). One connection in the pool, so the plan explained is the one made while the site was small.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000', DATABASE_POOL_SIZE: '1' });
const GROWN_TO = 3000;
let jobId: string;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  // No autovacuum analyze while the test runs: it would have the statement replanned on the grown table.
  await withAdmin((admin) => admin.query('alter table job set (autovacuum_enabled = off)'), site.server.database);
  jobId = (await jobAt(site.acme.as.dispatcher, PARIS)).id;
}, 60_000);

const inAcme = <T>(work: (em: EntityManager) => Promise<T>) => inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, work);

/** When the connection prepared the head statement: the same time means the same plan (no analyze ran since). */
async function preparedAt(em: EntityManager): Promise<string> {
  const [row] = await em.execute<{ at: string }[]>('select prepare_time::text as at from pg_prepared_statements where name = ?', [CHANGES_HEAD_WITH_JOB.name]);
  return row!.at;
}

/** `GROWN_TO` more jobs on acme, closed ones as most of a day's jobs are, all written in one transaction. */
function growSite(): Promise<unknown> {
  return withAdmin(
    (admin) =>
      admin.query(
        `insert into job (id, site_id, workflow_id, workflow_state_id, phase, snapshot, option_ids, created_at, updated_at)
         select j.id || '_' || g, j.site_id, j.workflow_id, j.workflow_state_id, 'completed', j.snapshot, j.option_ids, now(), now()
         from job j, generate_series(1, ${GROWN_TO}) g where j.id = $1`,
        [jobId],
      ),
    site.server.database,
  );
}

describe('the dispatch head read', () => {
  it('finds the jobs changed since its snapshot by job_change_xid_idx with the plan it made while the site was small', async () => {
    const small = await inAcme(async (em) => ({ head: await readSiteHead(em, site.acme.site.id, '1:1:', jobId), preparedAt: await preparedAt(em) }));
    await growSite();
    const grown = await inAcme((em) => readSiteHead(em, site.acme.site.id, small.head.snapshot, jobId));
    expect(grown.jobs).toHaveLength(GROWN_TO);
    // Nothing changed since `grown`: the read should touch the index entries of the changes, not the site's jobs.
    const plan = await inAcme(async (em) => {
      const [settings, execute] = await preparedStatements(em, CHANGES_HEAD_WITH_JOB, [grown.snapshot, site.acme.site.id, jobId]);
      await em.execute(settings!);
      const rows = await em.execute<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${execute!}`);
      expect(await preparedAt(em)).toBe(small.preparedAt);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('Index Scan using job_change_xid_idx on job j');
    const removedByFilter = [...plan.matchAll(/Rows Removed by Filter: (\d+)/g)].map((match) => Number(match[1]));
    expect(Math.max(0, ...removedByFilter)).toBeLessThan(GROWN_TO / 10);
  });
});
