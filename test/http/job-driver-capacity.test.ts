import { expect, it } from 'vitest';
import { createSiteFixture, type SiteFixture } from '../support/fixtures.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';
import { createDriver, createVehicle, jobAt } from './dispatch-fixtures.ts';

/**
 * A driver's max_load holds whichever way a job becomes theirs: not only through POST /dispatch/assign, but also when
 * staff create a job for the driver and move it into an assigned state themselves, or create it straight into one.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

type One<T> = { data: T };
type Failure = { code: string; fields?: { field: string }[] };
type Job = { id: string; phase: string; driver_user_id: string | null };
type Workflow = { states: { key: string; phase: string; is_initial: boolean }[]; transitions: Record<string, unknown>[] };

const PARIS = { lat: 48.8566, lng: 2.3522 };

const driverWithMaxLoadOne = async (fixture: SiteFixture, name: string) =>
  createDriver(site.server, fixture, { name, at: PARIS, vehicleId: await createVehicle(fixture, `${name} van`), maxLoad: 1 });

const jobFor = (fixture: SiteFixture, driverId: string) =>
  fixture.as.dispatcher.post<One<Job> & Failure>('/api/job', {
    customer_email: 'buyer@shop.example',
    driver_user_id: driverId,
    stops: [{ type: 'pickup', street_address: '1 Test Street', city: 'Paris', point: PARIS }, { type: 'dropoff', street_address: '2 Test Street', city: 'Paris', point: PARIS }],
  });

it('a job created for a driver at their max_load and moved to dispatched through POST /job/state is 409 DRIVER_AT_CAPACITY, and stays unassigned', async () => {
  const driver = await driverWithMaxLoadOne(site.acme, 'Full Fran');
  const first = await jobAt(site.acme.as.dispatcher, PARIS);
  expect((await site.acme.as.dispatcher.post('/api/dispatch/assign', { job_id: first.id, driver_id: driver.id })).status).toBe(200);
  const job = await createJob(site.acme.as.dispatcher, { driver_user_id: driver.id });
  const states = await stateIds(site.acme.as.admin, 'job');

  const moved = await site.acme.as.dispatcher.post<Failure>('/api/job/state', { job_id: job.id, workflow_state_id: states.dispatched });
  expect([moved.status, moved.body.code, moved.body.fields?.[0]?.field]).toEqual([409, 'DRIVER_AT_CAPACITY', 'driver_user_id']);
  expect((await site.acme.as.dispatcher.get<One<Job>>(`/api/job/${job.id}`)).body.data.phase).toBe('unassigned');

  // With a slot free (the first job returned), the same move goes through.
  expect((await site.acme.as.dispatcher.post('/api/job/state', { job_id: first.id, workflow_state_id: states.created })).status).toBe(200);
  const again = await site.acme.as.dispatcher.post<One<Job>>('/api/job/state', { job_id: job.id, workflow_state_id: states.dispatched });
  expect([again.status, again.body.data.phase, again.body.data.driver_user_id]).toEqual([200, 'assigned', driver.id]);
}, 60_000);

it('a job created for a driver at their max_load straight into an assigned state (the first state of a custom workflow) is 409 DRIVER_AT_CAPACITY', async () => {
  const globex = await createSiteFixture(site.server, 'globex');
  const current = (await globex.as.admin.get<One<Workflow>>('/api/workflow?entity_type=job')).body.data;
  // The job workflow starts in an assigned state of its own, from which `created` and the rest are reached.
  const states = [...current.states.map((s) => ({ ...s, is_initial: false })), { key: 'booked', name: 'Booked', phase: 'assigned', is_initial: true, is_terminal: false }];
  const transitions = [...current.transitions, { from: 'booked', to: 'created' }, { from: 'booked', to: 'dispatched' }];
  const put = await globex.as.admin.put('/api/workflow', { entity_type: 'job', states, transitions });
  expect(put.status).toBe(200);
  const driver = await driverWithMaxLoadOne(globex, 'Full Gus');
  const first = await jobFor(globex, driver.id);
  expect([first.status, first.body.data.phase]).toEqual([201, 'assigned']);

  const refused = await jobFor(globex, driver.id);
  expect([refused.status, refused.body.code, refused.body.fields?.[0]?.field]).toEqual([409, 'DRIVER_AT_CAPACITY', 'driver_user_id']);
  const open = await globex.as.dispatcher.get<{ data: Job[] }>(`/api/job/search?driver_user_id=${driver.id}`);
  expect(open.body.data.map((j) => j.id)).toEqual([first.body.data.id]);
}, 60_000);

it("a job started from unassigned by its stop's start (a custom workflow's created -> in_progress), for a driver at their max_load, is 409 DRIVER_AT_CAPACITY", async () => {
  const initech = await createSiteFixture(site.server, 'initech');
  const current = (await initech.as.admin.get<One<Workflow>>('/api/workflow?entity_type=job')).body.data;
  const put = await initech.as.admin.put('/api/workflow', { entity_type: 'job', states: current.states, transitions: [...current.transitions, { from: 'created', to: 'in_progress', roles: ['admin', 'dispatcher'] }] });
  expect(put.status).toBe(200);
  const driver = await driverWithMaxLoadOne(initech, 'Full Ina');
  const first = await jobAt(initech.as.dispatcher, PARIS);
  expect((await initech.as.dispatcher.post('/api/dispatch/assign', { job_id: first.id, driver_id: driver.id })).status).toBe(200);
  const job = await jobFor(initech, driver.id);
  const stops = await stateIds(initech.as.admin, 'stop');
  const pickup = (await initech.as.dispatcher.get<One<{ stops: { id: string }[] }>>(`/api/job/${job.body.data.id}`)).body.data.stops[0]!.id;
  expect((await initech.as.dispatcher.post('/api/stop/state', { stop_id: pickup, workflow_state_id: stops.assigned })).status).toBe(200);
  // The stop's start would start its job, straight from unassigned, with the driver it was created for.
  const started = await initech.as.dispatcher.post<Failure>('/api/stop/state', { stop_id: pickup, workflow_state_id: stops.en_route });
  expect([started.status, started.body.code]).toEqual([409, 'DRIVER_AT_CAPACITY']);
  expect((await initech.as.dispatcher.get<One<Job>>(`/api/job/${job.body.data.id}`)).body.data.phase).toBe('unassigned');
}, 60_000);
