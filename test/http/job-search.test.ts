import { beforeAll, expect, it } from 'vitest';
import { createJob, stateIds, type JobBody } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';
import { recording, transactionWith } from '../support/pg-recording.ts';
import { createDriver, createVehicle, jobAt, type TestDriver } from './dispatch-fixtures.ts';

type Job = JobBody & { driver_user_id: string | null; service_type_id: string | null; created_at: string; completed_at: string | null };
type Search = { data: Job[]; meta: { pagination: { page: number; pageSize: number; totalItems: number } } };
type List = { data: Job[]; meta: { total: number; page: number; per_page: number } };
type Failure = { code: string };

const PARIS = { lat: 48.8566, lng: 2.3522 };

// Each filter of GET /job/search, its sorting and paging, and who sees what, on jobs made for this file alone (the
// site's other jobs are those of the fixtures: none of them has this file's notes).
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
let driver: TestDriver;
let jobs: Record<'plain' | 'typed' | 'noted' | 'assigned' | 'done' | 'cancelled' | 'customers', Job>;
let before: string;
let serviceType: string;
let jobStates: Record<string, string>;

/** Fails the setup with the answer when a call of it was refused. */
function succeeded(response: { status: number; text: string }): void {
  if (response.status !== 200) throw new Error(`setup call refused: ${response.status} ${response.text}`);
}

beforeAll(async () => {
  const { dispatcher, admin, customer } = site.acme.as;
  driver = await createDriver(site.server, site.acme, { name: 'Search Sam', at: PARIS, vehicleId: await createVehicle(site.acme) });
  jobStates = await stateIds(admin, 'job');
  const stopStates = await stateIds(admin, 'stop');
  serviceType = (await admin.post<{ data: { id: string } }>('/api/servicetype', { name: 'Searchable' })).body.data.id;
  before = new Date().toISOString();
  const plain = (await jobAt(dispatcher, PARIS)) as Job;
  const typed = (await createJob(dispatcher, { service_type_id: serviceType })) as Job;
  const noted = (await createJob(dispatcher, { driver_notes: 'Ring the 100% BLUE_door', payment_method: 'voucher' })) as Job;
  const assigned = (await jobAt(dispatcher, PARIS)) as Job;
  const done = (await jobAt(dispatcher, PARIS)) as Job;
  const cancelled = (await jobAt(dispatcher, PARIS)) as Job;
  const customers = (await createJob(customer, { customer_email: undefined })) as Job;
  for (const job of [assigned, done]) succeeded(await dispatcher.post('/api/dispatch/assign', { job_id: job.id, driver_id: driver.id }));
  for (const stop of done.stops) {
    for (const key of ['en_route', 'arrived', 'completed']) succeeded(await driver.client.post('/api/driver/stop/state', { stop_id: stop.id, workflow_state_id: stopStates[key] }));
  }
  succeeded(await dispatcher.post('/api/job/state', { job_id: cancelled.id, workflow_state_id: jobStates.cancelled }));
  const read = async (job: Job) => (await dispatcher.get<{ data: Job }>(`/api/job/${job.id}`)).body.data;
  jobs = { plain: await read(plain), typed: await read(typed), noted: await read(noted), assigned: await read(assigned), done: await read(done), cancelled: await read(cancelled), customers: await read(customers) };
}, 60_000);

const search = async (query: string, client = site.acme.as.dispatcher) => {
  const response = await client.get<Search>(`/api/job/search?${query}`);
  expect(response.status).toBe(200);
  return response.body;
};
/** The ids a search finds among this file's jobs, in the order found. */
const ids = async (query: string, client = site.acme.as.dispatcher) => {
  const own = new Set(Object.values(jobs).map((job) => job.id));
  return (await search(`${query}&created_from=${encodeURIComponent(before)}&page_size=100`, client)).data.map((job) => job.id).filter((id) => own.has(id));
};

it('filters by phase, workflow state, customer, driver, service type, creation and completion time and text, each with its own rows', async () => {
  const { plain, typed, noted, assigned, done, cancelled, customers } = jobs;
  expect(new Set(await ids('phase=assigned&phase=completed'))).toEqual(new Set([assigned.id, done.id]));
  expect(await ids(`workflow_state_ids=${jobStates.cancelled}`)).toEqual([cancelled.id]);
  expect(new Set(await ids(`workflow_state_ids=${jobStates.cancelled}&workflow_state_ids=${jobStates.completed}`))).toEqual(new Set([cancelled.id, done.id]));
  expect(await ids(`customer_user_id=${customers.customer_user_id}`)).toEqual([customers.id]);
  expect(new Set(await ids(`driver_user_id=${driver.id}`))).toEqual(new Set([assigned.id, done.id]));
  expect(await ids(`service_type_id=${serviceType}`)).toEqual([typed.id]);
  expect(await ids(`completed_from=${encodeURIComponent(before)}`)).toEqual([done.id]);
  expect(await ids(`completed_to=${encodeURIComponent(done.completed_at!)}`)).toEqual([]);
  expect(await ids(`created_to=${encodeURIComponent(noted.created_at)}`)).toEqual([typed.id, plain.id]);
  // Text: in the notes or payment method, any case, with LIKE's wildcards taken literally; or a job's id.
  expect(await ids('q=100%25%20blue_DOOR')).toEqual([noted.id]);
  expect(await ids('q=VOUCHER')).toEqual([noted.id]);
  expect(await ids('q=100_%20blue')).toEqual([]);
  expect(await ids(`q=${plain.id}`)).toEqual([plain.id]);
  expect(await ids('phase=assigned&q=voucher')).toEqual([]);
});

it('sorts newest first unless told, by any sortable field either way, and pages with the total of every match', async () => {
  const all = Object.values(jobs).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)).map((job) => job.id);
  expect(await ids('')).toEqual(all.toReversed());
  expect(await ids('sort=created_at')).toEqual(all);
  expect(await ids('sort_by=id&sort_order=desc')).toEqual(all.toSorted().toReversed());
  const completedFirst = await ids('sort=-completed_at');
  expect(completedFirst.indexOf(jobs.done.id)).toBe(completedFirst.length - 1);
  expect((await site.acme.as.dispatcher.get<Failure>('/api/job/search?sort=customer_notes')).body.code).toBe('INVALID_SORT');

  const window = `created_from=${encodeURIComponent(before)}`;
  const first = await search(`${window}&page_size=3&page=1&sort=created_at`);
  const second = await search(`${window}&page_size=3&page=2&sort=created_at`);
  expect([...first.data, ...second.data].map((job) => job.id)).toEqual(all.slice(0, 6));
  expect([first.meta.pagination.totalItems, second.meta.pagination.totalItems]).toEqual([7, 7]);
  const past = await search(`${window}&page_size=3&page=9`);
  expect([past.data, past.meta.pagination.totalItems]).toEqual([[], 7]);
  const none = await search('q=nothing%20matches%20this&page=1');
  expect([none.data, none.meta.pagination.totalItems]).toEqual([[], 0]);
  const listed = await site.acme.as.dispatcher.get<List>('/api/job?per_page=2&page=1');
  expect(listed.body.data).toHaveLength(2);
  expect(listed.body.meta.total).toBeGreaterThanOrEqual(7);
});

it('shows a customer only their jobs and a driver only theirs, whatever they ask for; each job as GET /job/{id} shows it to them', async () => {
  const { customer } = site.acme.as;
  expect(await ids('', customer)).toEqual([jobs.customers.id]);
  expect(await ids(`customer_user_id=${jobs.plain.customer_user_id}`, customer)).toEqual([]);
  const driverSearch = await driver.client.post<Search>('/api/driver/job/search', { page_size: 100 });
  expect(new Set(driverSearch.body.data.map((job) => job.id))).toEqual(new Set([jobs.assigned.id, jobs.done.id]));
  expect(driverSearch.body.data).toEqual(await Promise.all(driverSearch.body.data.map(async (job) => (await driver.client.get<{ data: Job }>(`/api/job/${job.id}`)).body.data)));
  const staffSearch = (await search(`created_from=${encodeURIComponent(before)}&page_size=100`)).data;
  expect(staffSearch).toEqual(await Promise.all(staffSearch.map(async (job) => (await site.acme.as.dispatcher.get<{ data: Job }>(`/api/job/${job.id}`)).body.data)));
});

it('answers a search in one round trip', async () => {
  const sent = await recording(async () => {
    expect((await search(`q=${jobs.noted.id}`)).data.map((job) => job.id)).toEqual([jobs.noted.id]);
  });
  const transaction = transactionWith(sent, jobs.noted.id);
  expect(transaction).toHaveLength(1);
  expect(transaction[0]).toMatch(/^begin;.*; commit$/s);
});
