import { expect, it } from 'vitest';
import { createJob, jobRequest } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

type Failure = { code: string; fields?: { field: string }[] };
type Job = { id: string; stops: { id: string; internal_notes?: string | null }[] };

const site = useOneSite();

const refusal = (response: { status: number; body: Failure }) => [response.status, response.body.code, response.body.fields?.[0]?.field];

it("a customer's stop internal_notes is refused (403 naming the field) on create as on update, and creates nothing", async () => {
  const { customer, dispatcher } = site.acme.as;
  const [pickup, dropoff] = jobRequest().stops as Record<string, unknown>[];
  const jobCount = async () => (await customer.get<{ meta: { total: number } }>('/api/job')).body.meta.total;
  const before = await jobCount();

  const created = await customer.post<Failure>('/api/job', jobRequest({ customer_email: undefined, stops: [pickup, { ...dropoff, internal_notes: 'office says: leave it anywhere' }] }));
  expect(refusal(created)).toEqual([403, 'FORBIDDEN_FIELD', 'stops.1.internal_notes']);
  expect(await jobCount()).toBe(before);

  const own = (await createJob(customer, { customer_email: undefined })) as unknown as Job;
  const patched = await customer.send<Failure>('PATCH', `/api/job/${own.id}`, { stops: [{ id: own.stops[1]!.id, internal_notes: 'office says: leave it anywhere' }] });
  expect(refusal(patched)).toEqual([403, 'FORBIDDEN_FIELD', 'stops.0.internal_notes']);

  const staffs = await dispatcher.post<{ data: Job }>('/api/job', jobRequest({ stops: [pickup, { ...dropoff, internal_notes: 'back gate' }] }));
  expect([staffs.status, staffs.body.data.stops[1]!.internal_notes]).toEqual([201, 'back gate']);
});
