import { expect, it } from 'vitest';
import { createJob } from '../support/job-fixtures.ts';
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

  // The job list builds its views from the ORM's entities: one read path checks the other.
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
