import { Client } from 'pg';
import { expect, it } from 'vitest';
import { indexedDriverFacts } from '../../../engine/dispatch/driver-index.ts';
import { inTenantScope } from '../../../persistence/tenant-scope.ts';
import { useOneSite } from '../../support/one-site.ts';
import { urlFor } from '../../support/postgres.ts';
import { waitFor } from '../../support/wait-for.ts';
import { createDriver, createVehicle, jobAt } from '../../http/dispatch-fixtures.ts';

/**
 * A transaction that has written (a bulk distribution, after its first dispatches) reads the driver index with its
 * own uncommitted jobs counted in the loads, even when another read of the same process moves the shared index on
 * while its read runs: the load-balanced strategy relies on it to spread one bulk's jobs.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
const PARIS = { lat: 48.8566, lng: 2.3522 };

it("counts the reader's own uncommitted assignment in the driver's load when another read moved the index on meanwhile", async () => {
  const { orm } = site.server.services.db;
  const siteId = site.acme.site.id;
  const driver = await createDriver(site.server, site.acme, { name: 'Busy Bea', at: PARIS, vehicleId: await createVehicle(site.acme) });
  const [taken, next] = [await jobAt(site.acme.as.dispatcher, PARIS), await jobAt(site.acme.as.dispatcher, PARIS)];
  const loadIn = (read: { drivers: { userId: string; load: number }[] }) => read.drivers.find((d) => d.userId === driver.id)!.load;
  // The process knows the site: the next reads ask for changes since this one.
  expect(loadIn(await inTenantScope(orm, { siteId }, (em) => indexedDriverFacts(em, siteId, {})))).toBe(0);

  const locker = new Client({ connectionString: urlFor(site.server.database, 'postgres') });
  await locker.connect();
  try {
    // The reader's read of its job (with its stops' addresses) waits for this lock; a read without a job does not.
    await locker.query('begin');
    await locker.query('lock table address in access exclusive mode');
    const own = inTenantScope(orm, { siteId }, async (em) => {
      await em.execute("update job set phase = 'assigned', driver_user_id = ? where id = ?", [driver.id, taken.id]);
      return indexedDriverFacts(em, siteId, { jobId: next.id });
    });
    await waitFor('the reader waiting on the lock', async () => {
      const waiting = await locker.query("select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'", [site.server.database]);
      return waiting.rows[0].n >= 1;
    }, 10_000);
    // Another command of this process reads meanwhile, and moves the shared index to its snapshot.
    expect(loadIn(await inTenantScope(orm, { siteId }, (em) => indexedDriverFacts(em, siteId, {})))).toBe(0);
    await locker.query('commit');
    expect(loadIn(await own)).toBe(1);
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
  }
}, 60_000);
