import { expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { useOneSite } from '../support/one-site.ts';
import { waitFor } from '../support/wait-for.ts';
import { createDriver, createVehicle, jobAt } from './dispatch-fixtures.ts';

type Audit = { action: string; previous_data: { assigned_to_driver_id: string | null; status: string } | null; new_data: { assigned_to_driver_id: string | null; status: string } };
type Event = { event: string; entity_version: number; payload: { data: { assigned_to_driver_id: string | null; status: string } } };

const PARIS = { lat: 48.8566, lng: 2.3522 };

const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

it('a won claim is audited and announced as the claim, then the dispatch, in that order; a refused claim records nothing', async () => {
  const vehicle = await createVehicle(site.acme);
  const winner = await createDriver(site.server, site.acme, { name: 'Quick Quinn', at: PARIS, vehicleId: vehicle });
  const late = await createDriver(site.server, site.acme, { name: 'Late Lou', at: PARIS, vehicleId: vehicle });
  const job = await jobAt(site.acme.as.dispatcher, PARIS);
  const posted = await site.acme.as.dispatcher.post<{ data: { succeeded: { id: string }[] } }>('/api/dispatch/pool', { job_ids: [job.id] });
  const offer = posted.body.data.succeeded[0]!.id;

  expect((await winner.client.post('/api/dispatch/claim', { dispatch_id: offer })).status).toBe(200);
  expect((await late.client.post('/api/dispatch/claim', { dispatch_id: offer })).status).toBe(409);

  const events = await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
    em.execute<Event[]>('select event, entity_version, payload from outbox where entity_id = ? order by seq', [offer]),
  );
  expect(events.map((e) => [e.event, e.entity_version, e.payload.data.assigned_to_driver_id, e.payload.data.status])).toEqual([
    ['dispatch:created', 1, null, 'pending'],
    ['dispatch:updated', 2, winner.id, 'pending'],
    ['dispatch:updated', 3, winner.id, 'processing'],
  ]);
  const audit = await site.acme.as.admin.get<{ data: Audit[] }>(`/api/audit/search?entity_type=Dispatch&entity_id=${offer}`);
  const byAction = Object.fromEntries(audit.body.data.map((a) => [a.action, a]));
  expect(Object.keys(byAction).sort()).toEqual(['claim', 'create', 'dispatch']);
  expect(audit.body.data).toHaveLength(3);
  expect([byAction.claim!.previous_data!.assigned_to_driver_id, byAction.claim!.new_data.assigned_to_driver_id, byAction.claim!.new_data.status]).toEqual([null, winner.id, 'pending']);
  expect([byAction.dispatch!.previous_data!.status, byAction.dispatch!.new_data.status]).toEqual(['pending', 'processing']);
});

it('an offer or an unconfirmed dispatch of a job that ended leaves the pool at once and is completed by the background pass', async () => {
  const vehicle = await createVehicle(site.acme, 'Van ended');
  const driver = await createDriver(site.server, site.acme, { name: 'Pool Pat', at: PARIS, vehicleId: vehicle });
  const offered = await jobAt(site.acme.as.dispatcher, PARIS);
  const posted = await site.acme.as.dispatcher.post<{ data: { succeeded: { id: string }[] } }>('/api/dispatch/pool', { job_ids: [offered.id] });
  const offer = posted.body.data.succeeded[0]!.id;
  const unconfirmed = await jobAt(site.acme.as.dispatcher, PARIS);
  const sent = await site.acme.as.dispatcher.post<{ data: { dispatch: { id: string } } }>('/api/dispatch/assign', { job_id: unconfirmed.id, driver_id: driver.id, require_confirmation: true });
  expect(sent.status).toBe(200);
  const cancelled = await site.acme.as.dispatcher.post<{ succeeded: string[] }>('/api/job/bulk/cancel', { ids: [offered.id, unconfirmed.id] });
  expect(cancelled.body.succeeded).toHaveLength(2);

  const pool = await driver.client.get<{ data: { dispatch_id: string }[] }>('/api/dispatch/pool');
  expect(pool.status).toBe(200);
  expect(pool.body.data.map((entry) => entry.dispatch_id)).not.toContain(offer);
  const status = async (id: string) => (await site.acme.as.dispatcher.get<{ data: { status: string } }>(`/api/dispatch?id=${id}`)).body.data.status;
  await waitFor('both dispatches completed', async () => (await status(offer)) === 'completed' && (await status(sent.body.data.dispatch.id)) === 'completed', 10_000);
  expect((await driver.client.post('/api/dispatch/claim', { dispatch_id: offer })).status).toBe(409);
  expect((await driver.client.post('/api/dispatch/accept', { dispatch_id: sent.body.data.dispatch.id })).body).toMatchObject({ code: 'NOT_AWAITING_CONFIRMATION' });
});
