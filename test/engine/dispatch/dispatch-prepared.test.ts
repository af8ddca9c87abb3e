import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSiteHead } from '../../../engine/dispatch/driver-index-sync.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';
import { jobAt } from '../../http/dispatch-fixtures.ts';

/**
 * The dispatch path's prepared statements (`executePrepared`): planned once per connection with a generic plan and
 * shared by every site that connection serves, so row-level security must still decide what each execution sees.
 */
let server: TestServer;
let acme: SiteFixture;
let globex: SiteFixture;
let acmeJob: string;
let globexJob: string;

const PARIS = { lat: 48.8566, lng: 2.3522 };

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_POINTS: '100000' });
  acme = await createSiteFixture(server, 'acme');
  globex = await createSiteFixture(server, 'globex');
  acmeJob = (await jobAt(acme.as.dispatcher, PARIS)).id;
  globexJob = (await jobAt(globex.as.dispatcher, PARIS)).id;
}, 60_000);
afterAll(() => server.close());

/** A snapshot older than every row: the head read's change lists hold everything the transaction may see. */
const BEGINNING = '1:1:';

/** The head read with a snapshot (the prepared path), in a transaction bound to `site`. */
function headIn(site: SiteFixture, siteId: string, jobId: string) {
  return inTenantScope(server.services.db.orm, { siteId: site.site.id }, (em) => readSiteHead(em, siteId, BEGINNING, jobId));
}

/** The jobs of a head's job rows (one row per stop). */
const jobsIn = (rows: { id: string }[]) => [...new Set(rows.map((r) => r.id))];

describe('prepared dispatch statements', () => {
  it('answer each site for itself on shared connections: nothing of another site, asked for by id, is read', async () => {
    // Alternating sites, more times than the pool has connections, so each connection's one plan serves both.
    for (let round = 0; round < 6; round++) {
      const own = await headIn(acme, acme.site.id, acmeJob);
      expect(jobsIn(own.jobRows)).toEqual([acmeJob]);
      expect(own.jobs.map(([id]) => id)).toEqual([acmeJob]);
      const theirs = await headIn(globex, globex.site.id, globexJob);
      expect(jobsIn(theirs.jobRows)).toEqual([globexJob]);
      expect(theirs.jobs.map(([id]) => id)).toEqual([globexJob]);
      // The other site's job, or the other site's head altogether, asked for in this site's transaction: nothing of it.
      expect((await headIn(acme, acme.site.id, globexJob)).jobRows).toEqual([]);
      const foreign = await headIn(acme, globex.site.id, globexJob);
      expect({ jobRows: foreign.jobRows, jobs: foreign.jobs, states: foreign.states }).toEqual({ jobRows: [], jobs: [], states: [] });
    }
  });

  it('stay usable after the transaction that prepared them rolled back', async () => {
    for (let round = 0; round < 6; round++) {
      const rolledBack = inTenantScope(server.services.db.orm, { siteId: acme.site.id }, async (em) => {
        await readSiteHead(em, acme.site.id, BEGINNING, acmeJob);
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      const head = await headIn(acme, acme.site.id, acmeJob);
      expect(jobsIn(head.jobRows)).toEqual([acmeJob]);
    }
  });
});
