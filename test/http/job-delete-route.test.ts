import { expect, it } from 'vitest';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { sessionClient } from '../support/fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

type Route = { id: string; phase: string; job_ids: string[]; stops: { job_id: string }[] };

const site = useOneSite();

it('deleting an unassigned job takes it off its route, which completes when its other jobs are done', async () => {
  const { dispatcher, admin } = site.acme.as;
  const jobStates = await stateIds(admin, 'job');
  const stopStates = await stateIds(admin, 'stop');
  const driver = await sessionClient(site.server, 'acme', site.acme.users.driver);
  const delivered = await createJob(dispatcher, { driver_user_id: site.acme.users.driver.id });
  expect((await dispatcher.post('/api/job/state', { job_id: delivered.id, workflow_state_id: jobStates.dispatched })).status).toBe(200);
  const waiting = await createJob(dispatcher);
  const planned = await dispatcher.post<{ data: Route }>('/api/route', { service_date: '2026-11-21', driver_user_id: site.acme.users.driver.id, job_ids: [delivered.id, waiting.id] });
  const routeId = planned.body.data.id;
  // Stands in for dispatch, as in routes.test.ts: POST /dispatch/route would dispatch the waiting job as well.
  const asDispatcher = { siteId: site.acme.site.id, actor: { userId: site.acme.users.dispatcher.id, applicationId: null, requestId: 'test', role: 'dispatcher' as const } };
  await site.server.services.engine.transition(asDispatcher, 'route', routeId, { kind: 'phase', event: 'dispatch' });
  expect((await driver.post('/api/driver/route/start', { route_id: routeId })).status).toBe(200);
  for (const stop of delivered.stops) {
    for (const key of ['en_route', 'arrived', 'completed']) {
      expect((await driver.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[key] })).status).toBe(200);
    }
  }
  const route = async () => (await dispatcher.get<{ data: Route }>(`/api/route?id=${routeId}`)).body.data;
  expect((await route()).phase).toBe('in_progress');

  const deleted = await dispatcher.post<{ succeeded: string[] }>('/api/job/bulk/delete', { ids: [waiting.id] });
  expect(deleted.body.succeeded).toEqual([waiting.id]);

  const after = await route();
  expect(after).toMatchObject({ phase: 'completed', job_ids: [delivered.id] });
  expect(after.stops.map((stop) => stop.job_id)).toEqual(delivered.stops.map(() => delivered.id));
  const events = await inTenantScope(site.server.services.db.orm, { siteId: site.acme.site.id }, (em) =>
    em.execute<{ payload: { event: string; data: { phase: string } } }[]>('select payload from outbox where entity_id = ? order by seq', [routeId]),
  );
  expect(events.slice(-2).map(({ payload }) => [payload.event, payload.data.phase])).toEqual([
    ['route:update', 'in_progress'],
    ['route:state_change', 'completed'],
  ]);
  const audit = await admin.get<{ data: { action: string }[] }>(`/api/audit/search?entity_type=Route&entity_id=${routeId}&action=remove_job`);
  expect(audit.body.data).toHaveLength(1);
});
