import { expect, it } from 'vitest';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';
import { recording, transactionWith } from '../support/pg-recording.ts';
import { createDriver, createVehicle, jobAt } from './dispatch-fixtures.ts';

type Job = { id: string; internal_notes?: unknown; stops: { id: string; internal_notes?: unknown }[] };
type One = { data: Job };

const PARIS = { lat: 48.8566, lng: 2.3522 };

const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

it('GET /job/{id} shows staff any job of the site, a driver only the jobs assigned to them, a customer only their own; the same view the job list gives', async () => {
  const { dispatcher, customer } = site.acme.as;
  const vehicle = await createVehicle(site.acme);
  const assignee = await createDriver(site.server, site.acme, { name: 'Read Rae', at: PARIS, vehicleId: vehicle });
  const other = await createDriver(site.server, site.acme, { name: 'Read Roy', at: PARIS, vehicleId: vehicle });
  const assigned = await jobAt(dispatcher, PARIS);
  expect((await dispatcher.post('/api/dispatch/assign', { job_id: assigned.id, driver_id: assignee.id })).status).toBe(200);
  const unassigned = await jobAt(dispatcher, PARIS);
  const customers = await createJob(customer, { customer_email: undefined, internal_notes: 'ignored for customers' });

  const status = async (client: typeof dispatcher, id: string) => (await client.get(`/api/job/${id}`)).status;
  expect([await status(dispatcher, assigned.id), await status(dispatcher, unassigned.id), await status(dispatcher, customers.id)]).toEqual([200, 200, 200]);
  expect([await status(assignee.client, assigned.id), await status(assignee.client, unassigned.id), await status(assignee.client, customers.id)]).toEqual([200, 404, 404]);
  expect(await status(other.client, assigned.id)).toBe(404);
  expect([await status(customer, customers.id), await status(customer, assigned.id)]).toEqual([200, 404]);
  const missing = await dispatcher.get<{ code: string }>('/api/job/job_01NOPE0000000000000000000000');
  expect([missing.status, missing.body.code]).toEqual([404, 'NOT_FOUND']);

  // An edit answers with the view built from the ORM's entities (jobDetail): the SQL read must show the same.
  const patched = await dispatcher.send<One>('PATCH', `/api/job/${assigned.id}`, { internal_notes: 'back gate' });
  expect(patched.status).toBe(200);
  expect((await dispatcher.get<One>(`/api/job/${assigned.id}`)).body.data).toEqual(patched.body.data);
  const listed = (await dispatcher.get<{ data: Job[] }>('/api/job?per_page=100')).body.data;
  for (const id of [assigned.id, unassigned.id, customers.id]) expect((await dispatcher.get<One>(`/api/job/${id}`)).body.data).toEqual(listed.find((job) => job.id === id));
  const customerListed = (await customer.get<{ data: Job[] }>('/api/job?per_page=100')).body.data.find((job) => job.id === customers.id)!;
  const customerRead = (await customer.get<One>(`/api/job/${customers.id}`)).body.data;
  expect(customerRead).toEqual(customerListed);
  expect('internal_notes' in customerRead || customerRead.stops.some((stop) => 'internal_notes' in stop)).toBe(false);
});

it('GET /job/{id} reads in one round trip: BEGIN, the tenant settings, the read and the COMMIT in one query', async () => {
  const job = await jobAt(site.acme.as.dispatcher, PARIS);
  const sent = await recording(async () => {
    expect((await site.acme.as.dispatcher.get<One>(`/api/job/${job.id}`)).body.data.id).toBe(job.id);
  });
  const transaction = transactionWith(sent, job.id);
  expect(transaction).toHaveLength(1);
  expect(transaction[0]).toMatch(/^begin;.*; commit$/s);
});

it('GET /stop shows a stop as its job shows it, to whoever may see the job; PUT /stop and POST /stop/state answer as the reads show', async () => {
  const { dispatcher, customer } = site.acme.as;
  const vehicle = await createVehicle(site.acme, 'Van stops');
  const assignee = await createDriver(site.server, site.acme, { name: 'Stop Sue', at: PARIS, vehicleId: vehicle });
  const other = await createDriver(site.server, site.acme, { name: 'Stop Sid', at: PARIS, vehicleId: vehicle });
  const job = (await createJob(dispatcher, {
    stops: [
      { type: 'pickup', street_address: '1 Stop Street', city: 'Paris', point: PARIS, internal_notes: 'staff only: code 12' },
      { type: 'dropoff', street_address: '2 Stop Street', city: 'Paris', point: { lat: 48.87, lng: 2.36 } },
    ],
  })) as Job;
  expect((await dispatcher.post('/api/dispatch/assign', { job_id: job.id, driver_id: assignee.id })).status).toBe(200);
  const stopId = job.stops[0]!.id;
  const stopOf = async (client: typeof dispatcher) => (await client.get<{ data: Job['stops'][number] }>(`/api/stop?id=${stopId}`));
  const inJob = async (client: typeof dispatcher) => (await client.get<One>(`/api/job/${job.id}`)).body.data.stops[0];

  expect((await stopOf(dispatcher)).body.data).toEqual(await inJob(dispatcher));
  expect((await stopOf(dispatcher)).body.data.internal_notes).toBe('staff only: code 12');
  const driverView = await stopOf(assignee.client);
  expect(driverView.body.data).toEqual(await inJob(assignee.client));
  expect('internal_notes' in driverView.body.data).toBe(false);
  expect([(await stopOf(other.client)).status, (await stopOf(customer)).status]).toEqual([404, 404]);
  expect((await dispatcher.get('/api/stop?id=stp_01NOPE0000000000000000000000')).status).toBe(404);

  const updated = await dispatcher.put<{ data: { contact_name: string } }>('/api/stop', { id: stopId, contact_name: 'Gate keeper' });
  expect(updated.status).toBe(200);
  expect(updated.body.data).toEqual((await stopOf(dispatcher)).body.data);
  expect(updated.body.data.contact_name).toBe('Gate keeper');

  const states = await stateIds(site.acme.as.admin, 'stop');
  const moved = await dispatcher.post<One>('/api/stop/state', { stop_id: stopId, workflow_state_id: states.en_route });
  expect(moved.status).toBe(200);
  expect(moved.body.data).toEqual((await dispatcher.get<One>(`/api/job/${job.id}`)).body.data);
  expect((await other.client.post('/api/stop/state', { stop_id: stopId, workflow_state_id: states.arrived })).status).toBe(404);
  // The assigned driver moves it here too (checked inside the move's command), and sees the job as a driver.
  const byDriver = await assignee.client.post<One>('/api/stop/state', { stop_id: stopId, workflow_state_id: states.arrived });
  expect(byDriver.status).toBe(200);
  expect(byDriver.body.data).toEqual((await assignee.client.get<One>(`/api/job/${job.id}`)).body.data);

  const sent = await recording(async () => {
    expect((await stopOf(dispatcher)).status).toBe(200);
  });
  expect(transactionWith(sent, stopId)).toHaveLength(1);
});
