import { Client } from 'pg';
import { expect, it } from 'vitest';
import { useOneSite } from '../support/one-site.ts';
import { urlFor } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';
import { createDriver, createVehicle, jobAt } from './dispatch-fixtures.ts';

/**
 * A job dispatched onto the route it is already on (a route given to its driver, its job still unassigned) and a
 * change of that route's driver at the same time: one of them must see the other. The dispatch moves the route's
 * version with its write, so a route change that read the job unassigned fails its version check, and a dispatch
 * that read the route before the change fails its own and runs again on what the change left.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
const PARIS = { lat: 48.8566, lng: 2.3522 };

type Route = { id: string; version: number; phase: string; driver_user_id: string | null };
type Job = { id: string; driver_user_id: string | null; route_id: string | null; phase: string };

it("a dispatch to a route's driver and a change of that route's driver, interleaved: the route's jobs never end up with another driver than the route's", async () => {
  const vehicle = await createVehicle(site.acme, 'Route van');
  const [ann, ben] = [await createDriver(site.server, site.acme, { name: 'Ann Route', at: PARIS, vehicleId: vehicle }), await createDriver(site.server, site.acme, { name: 'Ben Route', at: PARIS, vehicleId: vehicle })];
  const job = await jobAt(site.acme.as.dispatcher, PARIS);
  const planned = await site.acme.as.dispatcher.post<{ data: Route }>('/api/route', { service_date: '2026-11-23', driver_user_id: ann.id, vehicle_id: vehicle, job_ids: [job.id] });
  expect(planned.status).toBe(201);
  const route = planned.body.data;
  // The route is given to Ann (as a route dispatched earlier whose other jobs are done), its job still unassigned.
  const dispatcher = { siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: 'test', role: 'dispatcher' as const } };
  await site.server.services.engine.transition(dispatcher, 'route', route.id, { kind: 'phase', event: 'dispatch' });

  const locker = new Client({ connectionString: urlFor(site.server.database, 'postgres') });
  await locker.connect();
  try {
    // The dispatch reads the route (Ann's) and the job, then waits for the test's lock to write the job.
    await locker.query('begin');
    await locker.query('lock table job in share row exclusive mode');
    const dispatched = site.acme.as.dispatcher.post<{ code?: string }>('/api/dispatch/assign', { job_id: job.id, driver_id: ann.id, route_id: route.id });
    await waitFor('the dispatch waiting on the lock', async () => {
      const waiting = await locker.query("select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'", [site.server.database]);
      return waiting.rows[0].n >= 1;
    }, 10_000);
    // Meanwhile the route goes to Ben: its job is still unassigned, so nothing holds it back.
    const changed = await site.acme.as.dispatcher.put<{ data: Route }>('/api/route', { id: route.id, driver_user_id: ben.id });
    expect(changed.status).toBe(200);
    await locker.query('commit');
    const answer = await dispatched;
    expect([answer.status, answer.body.code]).toEqual([409, 'DRIVER_MISMATCH']);
    const after = (await site.acme.as.dispatcher.get<{ data: Job }>(`/api/job/${job.id}`)).body.data;
    const routeAfter = (await site.acme.as.dispatcher.get<{ data: Route }>(`/api/route?id=${route.id}`)).body.data;
    expect(routeAfter.driver_user_id).toBe(ben.id);
    expect(after).toMatchObject({ route_id: route.id, driver_user_id: null, phase: 'unassigned' });
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
  }
}, 60_000);

it('a dispatch onto the route the job is on moves the route to a new version', async () => {
  const vehicle = await createVehicle(site.acme, 'Second van');
  const cid = await createDriver(site.server, site.acme, { name: 'Cid Route', at: PARIS, vehicleId: vehicle });
  const job = await jobAt(site.acme.as.dispatcher, PARIS);
  const route = (await site.acme.as.dispatcher.post<{ data: Route }>('/api/route', { service_date: '2026-11-24', driver_user_id: cid.id, vehicle_id: vehicle, job_ids: [job.id] })).body.data;
  const dispatcher = { siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: 'test', role: 'dispatcher' as const } };
  await site.server.services.engine.transition(dispatcher, 'route', route.id, { kind: 'phase', event: 'dispatch' });
  const before = (await site.acme.as.dispatcher.get<{ data: Route }>(`/api/route?id=${route.id}`)).body.data;
  expect((await site.acme.as.dispatcher.post('/api/dispatch/assign', { job_id: job.id, driver_id: cid.id, route_id: route.id })).status).toBe(200);
  // A change sent with the version read before the dispatch is refused: it may have been decided on the job unassigned.
  const stale = await site.acme.as.dispatcher.put<{ code: string }>('/api/route', { id: route.id, version: before.version, name: 'Renamed' });
  expect([stale.status, stale.body.code]).toEqual([409, 'VERSION_CONFLICT']);
});
