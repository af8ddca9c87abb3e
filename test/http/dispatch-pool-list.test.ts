import { expect, it } from 'vitest';
import { poolOffers } from '../../engine/dispatch/pool.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createJob } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';
import { withAdmin } from '../support/postgres.ts';
import { recording, transactionWith } from '../support/pg-recording.ts';
import { createDriver, createTeam, createVehicle, jobAt } from './dispatch-fixtures.ts';

type Job = { id: string; internal_notes?: string | null; stops: { internal_notes?: string | null }[] };
type Pool = { data: { dispatch_id: string; job: Job; posted_at: string; team_id: string | null }[]; meta: { total: number; page: number; per_page: number } };
type Posted = { data: { succeeded: { id: string }[]; failed: unknown[] } };

const PARIS = { lat: 48.8566, lng: 2.3522 };

const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

/** A job as staff read it, without what only staff see: what its driver is shown. */
function withoutInternalNotes(job: Job): Job {
  const { internal_notes: _, ...rest } = job;
  return { ...rest, stops: job.stops.map(({ internal_notes: _notes, ...stop }) => stop) };
}

it("GET /dispatch/pool's read finds each offer's job by its key, not among the site's jobs, on a site analyzed before its first jobs", async () => {
  // Statistics of a new site, as an ANALYZE before its first jobs leaves them (a bench's after its seed); then it grows.
  await withAdmin((admin) => admin.query('analyze job, dispatch'), site.server.database);
  const driver = await createDriver(site.server, site.acme, { name: 'Plan Pia', at: PARIS, vehicleId: await createVehicle(site.acme, 'Van plan') });
  const job = await jobAt(site.acme.as.dispatcher, PARIS);
  await site.acme.as.dispatcher.post('/api/dispatch/pool', { job_ids: [job.id] });
  await withAdmin(
    (admin) =>
      admin.query(
        `insert into job (id, site_id, workflow_id, workflow_state_id, phase, snapshot, option_ids, created_at, updated_at)
         select j.id || '_' || g, j.site_id, j.workflow_id, j.workflow_state_id, 'completed', j.snapshot, j.option_ids, now(), now()
         from job j, generate_series(1, 200) g where j.id = $1`,
        [job.id],
      ),
    site.server.database,
  );
  const scope = { siteId: site.acme.site.id, userId: driver.id };
  const rows = await inTenantScope(site.server.services.db.orm, scope, (em) =>
    em.execute<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${poolOffers('asc')}`, [site.acme.site.id, new Date(), driver.id, 100, 0]),
  );
  const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
  expect(plan).toMatch(/Index Scan using job_pkey on job j/);
  const removed = [...plan.matchAll(/Rows Removed by (?:Join )?Filter: (\d+)/g)].map((match) => Number(match[1]));
  expect(Math.max(0, ...removed)).toBeLessThan(100);
});

it("GET /dispatch/pool lists what the driver may claim now, oldest first, each job as its driver would see it, in one round trip", async () => {
  const { dispatcher } = site.acme.as;
  const vehicle = await createVehicle(site.acme);
  const team = await createTeam(site.acme, 'Bikes');
  const member = await createDriver(site.server, site.acme, { name: 'Pool Member', at: PARIS, vehicleId: vehicle, teamIds: [team] });
  const outsider = await createDriver(site.server, site.acme, { name: 'Pool Outsider', at: PARIS, vehicleId: vehicle });
  const noted = await createJob(dispatcher, {
    internal_notes: 'staff only: gate code 4711',
    stops: [
      { type: 'pickup', street_address: '1 Test Street', city: 'Paris', point: PARIS, internal_notes: 'staff only: back door' },
      { type: 'dropoff', street_address: '2 Test Street', city: 'Paris', point: { lat: 48.87, lng: 2.36 } },
    ],
  }) as Job;
  const forTeam = await jobAt(dispatcher, PARIS);
  const later = await jobAt(dispatcher, PARIS);
  const deleted = await jobAt(dispatcher, PARIS);
  const taken = await jobAt(dispatcher, PARIS);
  const post = async (body: Record<string, unknown>) => (await dispatcher.post<Posted>('/api/dispatch/pool', body)).body.data.succeeded[0]!.id;
  const notedOffer = await post({ job_ids: [noted.id] });
  const teamOffer = await post({ job_ids: [forTeam.id], team_id: team });
  await post({ job_ids: [later.id], start_at: new Date(Date.now() + 3_600_000).toISOString() });
  await post({ job_ids: [deleted.id] });
  const takenOffer = await post({ job_ids: [taken.id] });
  expect((await dispatcher.post<{ succeeded: string[] }>('/api/job/bulk/delete', { ids: [deleted.id] })).body.succeeded).toEqual([deleted.id]);
  expect((await outsider.client.post('/api/dispatch/claim', { dispatch_id: takenOffer })).status).toBe(200);

  const mine = new Set([noted.id, forTeam.id, later.id, deleted.id, taken.id]);
  // This test's offers (the file's other test posts one too).
  const pool = async (driver: typeof member) => (await driver.client.get<Pool>('/api/dispatch/pool')).body.data.filter((offer) => mine.has(offer.job.id));
  const seen = await pool(member);
  expect(seen.map((offer) => [offer.dispatch_id, offer.job.id, offer.team_id])).toEqual([
    [notedOffer, noted.id, null],
    [teamOffer, forTeam.id, team],
  ]);
  expect(seen[0]!.posted_at <= seen[1]!.posted_at).toBe(true);
  expect((await pool(outsider)).map((offer) => offer.job.id)).toEqual([noted.id]);
  const staffView = async (id: string) => (await dispatcher.get<{ data: Job }>(`/api/job/${id}`)).body.data;
  expect(seen.map((offer) => offer.job)).toEqual([withoutInternalNotes(await staffView(noted.id)), withoutInternalNotes(await staffView(forTeam.id))]);
  expect(JSON.stringify(seen)).not.toContain('staff only');

  // Pages, in either order, with the count of every offer the driver may claim (the file's other test posts one too).
  const all = (await member.client.get<Pool>('/api/dispatch/pool?per_page=100')).body;
  const page = async (query: string) => (await member.client.get<Pool>(`/api/dispatch/pool?${query}`)).body;
  const [first, second, past] = [await page('per_page=1'), await page('per_page=1&page=2'), await page(`per_page=1&page=${all.meta.total + 1}`)];
  expect([...first.data, ...second.data].map((offer) => offer.dispatch_id)).toEqual(all.data.slice(0, 2).map((offer) => offer.dispatch_id));
  expect([first.meta, past.meta.total, past.data]).toEqual([{ total: all.meta.total, page: 1, per_page: 1 }, all.meta.total, []]);
  expect((await page('sort=-posted_at&per_page=100')).data.map((offer) => offer.dispatch_id)).toEqual(all.data.map((offer) => offer.dispatch_id).toReversed());

  // BEGIN, the tenant settings, the read and the COMMIT in one query (the read prepared on connections that sent it before).
  const sent = await recording(async () => {
    expect((await pool(member)).map((offer) => offer.dispatch_id)).toEqual([notedOffer, teamOffer]);
  });
  const transaction = transactionWith(sent, member.id);
  expect(transaction).toHaveLength(1);
  expect(transaction[0]).toMatch(/^begin;.*; commit$/s);
});

it('GET /dispatch/search pages a filter newest first (oldest first when sorted so) with the count of every match, also past the last page, in one round trip each', async () => {
  const { dispatcher } = site.acme.as;
  const team = await createTeam(site.acme, 'Searched');
  const offers: string[] = [];
  for (let i = 0; i < 3; i++) {
    const job = await jobAt(dispatcher, PARIS);
    offers.push((await dispatcher.post<Posted>('/api/dispatch/pool', { job_ids: [job.id], team_id: team })).body.data.succeeded[0]!.id);
  }
  type Found = { data: { id: string; team_id: string }[]; meta: { pagination: { totalItems: number } } };
  const page = async (n: number) => (await dispatcher.get<Found>(`/api/dispatch/search?team_id=${team}&page_size=2&page=${n}`)).body;
  const [first, second, past] = [await page(1), await page(2), await page(3)];
  expect([...first.data, ...second.data].map((record) => record.id)).toEqual(offers.toReversed());
  expect([first.meta.pagination.totalItems, second.meta.pagination.totalItems, past.meta.pagination.totalItems]).toEqual([3, 3, 3]);
  expect(past.data).toEqual([]);
  for (const sort of ['sort=created_at', 'sort_by=created_at&sort_order=asc']) {
    expect((await dispatcher.get<Found>(`/api/dispatch/search?team_id=${team}&${sort}`)).body.data.map((record) => record.id)).toEqual(offers);
  }
  expect((await dispatcher.get<{ data: { id: string } }>(`/api/dispatch?id=${offers[0]}`)).body.data.id).toBe(offers[0]);
  const sent = await recording(async () => {
    expect((await dispatcher.get(`/api/dispatch?id=${offers[1]}`)).status).toBe(200);
  });
  expect(transactionWith(sent, offers[1]!)).toHaveLength(1);
});
