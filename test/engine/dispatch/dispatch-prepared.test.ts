import { beforeAll, describe, expect, it } from 'vitest';
import { readSiteHead } from '../../../engine/dispatch/driver-index-sync.ts';
import { DRIVER_DAY_STATEMENT } from '../../../engine/dispatch/driver-day-statement.ts';
import { JOB_TARGET_SQL } from '../../../engine/dispatch/job-target.ts';
import { preparedStatements, type NamedStatement } from '../../../engine/dispatch/prepared-statement.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import type { SiteFixture } from '../../support/fixtures.ts';
import { useTwoSites } from '../../support/two-sites.ts';
import { jobAt } from '../../http/dispatch-fixtures.ts';

/**
 * The dispatch path's prepared statements (`executePrepared`): planned once per connection with a generic plan and
 * shared by every site that connection serves, so row-level security must still decide what each execution sees.
 */
const sites = useTwoSites({ RATE_LIMIT_POINTS: '100000' });
let acmeJob: string;
let globexJob: string;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  acmeJob = (await jobAt(sites.acme.as.dispatcher, PARIS)).id;
  globexJob = (await jobAt(sites.globex.as.dispatcher, PARIS)).id;
}, 60_000);

/** A snapshot older than every row: the head read's change lists hold everything the transaction may see. */
const BEGINNING = '1:1:';

/** The head read with a snapshot (the prepared path), in a transaction bound to `site`. */
function headIn(site: SiteFixture, siteId: string, jobId: string) {
  return inTenantScope(sites.server.services.db.orm, { siteId: site.site.id }, (em) => readSiteHead(em, siteId, BEGINNING, jobId));
}

/** The jobs of a head's job rows (one row per stop). */
const jobsIn = (rows: { id: string }[]) => [...new Set(rows.map((r) => r.id))];

describe('prepared dispatch statements', () => {
  it('answer each site for itself on shared connections: nothing of another site, asked for by id, is read', async () => {
    // Alternating sites, more times than the pool has connections, so each connection's one plan serves both.
    for (let round = 0; round < 6; round++) {
      const own = await headIn(sites.acme, sites.acme.site.id, acmeJob);
      expect(jobsIn(own.jobRows)).toEqual([acmeJob]);
      expect(own.jobs.map(([id]) => id)).toEqual([acmeJob]);
      const theirs = await headIn(sites.globex, sites.globex.site.id, globexJob);
      expect(jobsIn(theirs.jobRows)).toEqual([globexJob]);
      expect(theirs.jobs.map(([id]) => id)).toEqual([globexJob]);
      // The other site's job, or the other site's head altogether, asked for in this site's transaction: nothing of it.
      expect((await headIn(sites.acme, sites.acme.site.id, globexJob)).jobRows).toEqual([]);
      const foreign = await headIn(sites.acme, sites.globex.site.id, globexJob);
      expect({ jobRows: foreign.jobRows, jobs: foreign.jobs, states: foreign.states }).toEqual({ jobRows: [], jobs: [], states: [] });
    }
  });

  it('stay usable after the transaction that prepared them rolled back', async () => {
    for (let round = 0; round < 6; round++) {
      const rolledBack = inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, async (em) => {
        await readSiteHead(em, sites.acme.site.id, BEGINNING, acmeJob);
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      const head = await headIn(sites.acme, sites.acme.site.id, acmeJob);
      expect(jobsIn(head.jobRows)).toEqual([acmeJob]);
    }
  });

  it('keep the site check on a job asked for by id when the transaction may see every site', async () => {
    const platform = inTenantScope(sites.server.services.db.orm, { siteId: null, platform: true }, (em) => readSiteHead(em, sites.acme.site.id, BEGINNING, globexJob));
    expect((await platform).jobRows).toEqual([]);
  });

  it('find the job and the routes by their indexes, whatever the statistics say', async () => {
    // The test tables hold a few rows and were never analyzed with them: a generic plan then costs every index that
    // leads with `site_id` at one row, as the bench's fresh tables did, and used to pick the smallest.
    let next = 0;
    const jobTarget: NamedStatement = { name: 'test_job_target', sql: JOB_TARGET_SQL.replace(/\?/g, () => `$${[1, 2, 1][next++]}::text`) };
    const target = await genericPlan(jobTarget);
    expect(target).toContain('Index Scan using job_pkey on job');
    expect(target).toContain('Index Scan using address_pkey on address');
    expect(target).not.toContain('Seq Scan');
    const write = await genericPlan(DRIVER_DAY_STATEMENT);
    expect(write).toMatch(/Index Scan using route_driver_day_idx on route\s/);
    expect(write.match(/Index Scan using route_pkey on route/g)).toHaveLength(2);
    expect(write).toContain('Index Scan using job_pkey on job');
    expect(write).not.toMatch(/Index Scan using (route_site|job_site)/);
    expect(write).not.toContain('Seq Scan');
  });
});

/** `statement`'s generic plan as the dispatch path runs it (its settings, then EXPLAIN of the EXECUTE, null arguments). */
function genericPlan(statement: NamedStatement): Promise<string> {
  return inTenantScope(sites.server.services.db.orm, { siteId: sites.acme.site.id }, async (em) => {
    const parameters = new Set(statement.sql.match(/\$\d+/g)).size;
    const [settings, execute] = await preparedStatements(em, statement, Array.from({ length: parameters }, () => null));
    await em.execute(settings!);
    const rows = await em.execute<{ 'QUERY PLAN': string }[]>(`explain ${execute!}`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}
