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

it("a customer's job update that names another customer is refused naming customer_user_id (the field sent), and changes nothing", async () => {
  const { customer, dispatcher } = site.acme.as;
  const own = (await createJob(customer, { customer_email: undefined })) as unknown as Job & { customer_user_id: string };
  const other = await dispatcher.post<{ data: { id: string } }>('/api/customer', { email: 'someone-else@example.com' });
  const refused = await customer.send<Failure>('PATCH', `/api/job/${own.id}`, { customer_user_id: other.body.data.id });
  expect(refusal(refused)).toEqual([403, 'FORBIDDEN_FIELD', 'customer_user_id']);
  expect((await dispatcher.get<{ data: { customer_user_id: string } }>(`/api/job/${own.id}`)).body.data.customer_user_id).toBe(own.customer_user_id);
});

it('PATCH /job/{id} clears options and custom field values with null (job and stop), but never a required field', async () => {
  type WithValues = { id: string; option_ids: string[]; custom_fields: Record<string, unknown>; stops: { id: string; custom_fields: Record<string, unknown> }[] };
  const { admin, dispatcher } = site.acme.as;
  const define = (body: Record<string, unknown>) => admin.post<{ data: { id: string } }>('/api/customfield', { data_type: 'text', ...body });
  expect((await define({ entity_type: 'job', key: 'door_colour', label: 'Door colour' })).status).toBe(201);
  expect((await define({ entity_type: 'stop', key: 'gate_code', label: 'Gate code' })).status).toBe(201);
  const option = await dispatcher.post<{ data: { id: string } }>('/api/option', { name: 'Fragile' });
  const [pickup, dropoff] = jobRequest().stops as Record<string, unknown>[];
  const job = (await createJob(dispatcher, { option_ids: [option.body.data.id], custom_fields: { door_colour: 'red' }, stops: [{ ...pickup, custom_fields: { gate_code: 'B12' } }, dropoff] })) as unknown as WithValues;
  expect([job.option_ids, job.custom_fields, job.stops[0]!.custom_fields]).toEqual([[option.body.data.id], { door_colour: 'red' }, { gate_code: 'B12' }]);

  const cleared = await dispatcher.send<{ data: WithValues }>('PATCH', `/api/job/${job.id}`, { option_ids: null, custom_fields: null, stops: [{ id: job.stops[0]!.id, custom_fields: null }] });
  expect(cleared.status, cleared.text).toBe(200);
  expect([cleared.body.data.option_ids, cleared.body.data.custom_fields, cleared.body.data.stops[0]!.custom_fields]).toEqual([[], {}, {}]);
  expect((await dispatcher.get<{ data: WithValues }>(`/api/job/${job.id}`)).body.data).toEqual(cleared.body.data);

  const required = await define({ entity_type: 'job', key: 'reference', label: 'Reference', is_required: true });
  try {
    const kept = (await createJob(dispatcher, { custom_fields: { reference: 'PO-7', door_colour: 'blue' } })) as unknown as WithValues;
    const refused = await dispatcher.send<Failure>('PATCH', `/api/job/${kept.id}`, { custom_fields: null });
    expect(refusal(refused)).toEqual([400, 'CUSTOM_FIELD_REQUIRED', 'custom_fields.reference']);
    expect((await dispatcher.get<{ data: WithValues }>(`/api/job/${kept.id}`)).body.data.custom_fields).toEqual({ reference: 'PO-7', door_colour: 'blue' });
  } finally {
    await admin.put('/api/customfield', { id: required.body.data.id, is_active: false });
  }
});

it('a retired custom field or option never blocks a job edit: its value can be removed or sent back as it was, new ones are refused', async () => {
  type WithValues = { id: string; option_ids: string[]; custom_fields: Record<string, unknown> };
  const { admin, dispatcher } = site.acme.as;
  const field = await admin.post<{ data: { id: string } }>('/api/customfield', { data_type: 'text', entity_type: 'job', key: 'old_ref', label: 'Old reference' });
  const retired = await dispatcher.post<{ data: { id: string } }>('/api/option', { name: 'Retired extra' });
  const current = await dispatcher.post<{ data: { id: string } }>('/api/option', { name: 'Current extra' });
  const job = (await createJob(dispatcher, { option_ids: [retired.body.data.id], custom_fields: { old_ref: 'R-1' } })) as unknown as WithValues;
  expect((await admin.put('/api/customfield', { id: field.body.data.id, is_active: false })).status).toBe(200);
  expect((await admin.put('/api/option', { id: retired.body.data.id, is_active: false })).status).toBe(200);

  // What GET answered, sent back with one more option: accepted.
  const echoed = await dispatcher.send<{ data: WithValues }>('PATCH', `/api/job/${job.id}`, { option_ids: [retired.body.data.id, current.body.data.id], custom_fields: { old_ref: 'R-1' } });
  expect(echoed.status).toBe(200);
  expect(echoed.body.data.option_ids).toEqual([retired.body.data.id, current.body.data.id]);
  // A new value of the retired field is refused; removing it is not.
  expect(refusal(await dispatcher.send<Failure>('PATCH', `/api/job/${job.id}`, { custom_fields: { old_ref: 'R-2' } }))).toEqual([400, 'CUSTOM_FIELD_INACTIVE', 'custom_fields.old_ref']);
  const removed = await dispatcher.send<{ data: WithValues }>('PATCH', `/api/job/${job.id}`, { custom_fields: { old_ref: null } });
  expect([removed.status, removed.body.data.custom_fields]).toEqual([200, {}]);
  // A retired option cannot be added to another job.
  const other = (await createJob(dispatcher)) as unknown as WithValues;
  expect((await dispatcher.send<Failure>('PATCH', `/api/job/${other.id}`, { option_ids: [retired.body.data.id] })).body.code).toBe('OPTION_INACTIVE');
});
