import { beforeAll, describe, expect, it } from 'vitest';
import { type SiteFixture } from '../support/fixtures.ts';
import { createJob, jobRequest } from '../support/job-fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

type One<T = Record<string, unknown>> = { data: T };
type Many<T = Record<string, unknown>> = { data: T[]; meta: { pagination: { totalItems: number } } };
type Failure = { code: string; fields?: { field: string }[] };
type Definition = { id: string; key: string; entity_type: string; data_type: string; is_required: boolean; is_active: boolean; options: { value: string; label: string }[]; sort_order: number };
type WithValues = { id: string; custom_fields: Record<string, unknown>; stops?: { id: string; custom_fields: Record<string, unknown> }[] };

const sites = useTwoSites();

async function define(site: SiteFixture, body: Record<string, unknown>): Promise<Definition> {
  const response = await site.as.admin.post<One<Definition>>('/api/customfield', body);
  if (response.status !== 201) throw new Error(`define failed: ${response.status} ${response.text}`);
  return response.body.data;
}

beforeAll(async () => {
  await define(sites.acme, { entity_type: 'job', key: 'priority', label: 'Priority', data_type: 'select', is_required: true, options: [{ value: 'low' }, { value: 'high', label: 'High!' }], sort_order: 1 });
  await define(sites.acme, { entity_type: 'job', key: 'fragile', label: 'Fragile', data_type: 'checkbox', sort_order: 2 });
  await define(sites.acme, { entity_type: 'job', key: 'weight_kg', label: 'Weight', data_type: 'number', sort_order: 3 });
  await define(sites.acme, { entity_type: 'job', key: 'deliver_on', label: 'Delivery day', data_type: 'date', sort_order: 4 });
  await define(sites.acme, { entity_type: 'stop', key: 'gate_code', label: 'Gate code', data_type: 'text' });
});

describe('custom field definitions', () => {
  it('creates, lists in sort order, updates and deactivates definitions, auditing each change', async () => {
    const list = await sites.acme.as.dispatcher.get<Many<Definition>>('/api/customfield/search?entity_type=job');
    expect(list.body.data.map((d) => d.key)).toEqual(['priority', 'fragile', 'weight_kg', 'deliver_on']);
    expect(list.body.data[0]!.options).toEqual([{ value: 'low', label: 'low' }, { value: 'high', label: 'High!' }]);

    const made = await define(sites.acme, { entity_type: 'worker', key: 'badge', label: 'Badge', data_type: 'text' });
    const updated = await sites.acme.as.admin.put<One<Definition>>('/api/customfield', { id: made.id, label: 'Badge number', is_active: false });
    expect(updated.body.data).toMatchObject({ key: 'badge', label: 'Badge number', is_active: false, data_type: 'text' });
    expect((await sites.acme.as.admin.get<Many<Definition>>('/api/customfield/search?entity_type=worker&is_active=true')).body.data).toEqual([]);
    const audit = await sites.acme.as.admin.get<Many<{ action: string }>>(`/api/audit/search?entity_type=CustomFieldDefinition&entity_id=${made.id}`);
    expect(audit.body.data.map((r) => r.action).sort()).toEqual(['create', 'update']);
  });

  it('refuses a select without options, options on other types, a duplicate key, and non-admins', async () => {
    const base = { entity_type: 'customer', label: 'X' };
    expect((await sites.acme.as.admin.post<Failure>('/api/customfield', { ...base, key: 'tier', data_type: 'select' })).body.code).toBe('OPTIONS_REQUIRED');
    expect((await sites.acme.as.admin.post<Failure>('/api/customfield', { ...base, key: 'tier', data_type: 'text', options: [{ value: 'a' }] })).body.code).toBe('OPTIONS_NOT_ALLOWED');
    expect((await sites.acme.as.admin.post<Failure>('/api/customfield', { ...base, key: 'Bad Key', data_type: 'text' })).status).toBe(400);
    const duplicate = await sites.acme.as.admin.post<Failure>('/api/customfield', { entity_type: 'job', key: 'priority', label: 'Again', data_type: 'text' });
    expect([duplicate.status, duplicate.body.code]).toEqual([409, 'CUSTOM_FIELD_EXISTS']);
    expect((await sites.acme.as.dispatcher.post('/api/customfield', { ...base, key: 'tier', data_type: 'text' })).status).toBe(403);
  });

  it("keeps each site's definitions to itself", async () => {
    const list = await sites.acme.as.admin.get<Many<Definition>>('/api/customfield/search?entity_type=job');
    expect((await sites.globex.as.admin.get(`/api/customfield?id=${list.body.data[0]!.id}`)).status).toBe(404);
    expect((await sites.globex.as.admin.get<Many<Definition>>('/api/customfield/search')).body.data).toEqual([]);
    // globex has no required priority: its jobs need none
    expect((await sites.globex.as.dispatcher.post('/api/job', jobRequest())).status).toBe(201);
  });
});

describe('custom field values', () => {
  it('a required field missing on create is 400 naming it, and nothing is created', async () => {
    const before = await sites.acme.as.admin.get<Many>('/api/job/search');
    const response = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest({ custom_fields: { fragile: true } }));
    expect([response.status, response.body.code, response.body.fields?.[0]?.field]).toEqual([400, 'CUSTOM_FIELD_REQUIRED', 'custom_fields.priority']);
    expect((await sites.acme.as.admin.get<Many>('/api/job/search')).body.meta.pagination.totalItems).toBe(before.body.meta.pagination.totalItems);
  });

  it('a select rejects an unknown option; wrong types and unknown keys are 400 naming the key', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ priority: 'urgent' }, 'INVALID_OPTION', 'custom_fields.priority'],
      [{ priority: 'low', fragile: 'yes' }, 'INVALID_CUSTOM_FIELD', 'custom_fields.fragile'],
      [{ priority: 'low', weight_kg: '12' }, 'INVALID_CUSTOM_FIELD', 'custom_fields.weight_kg'],
      [{ priority: 'low', deliver_on: '2026-02-30' }, 'INVALID_CUSTOM_FIELD', 'custom_fields.deliver_on'],
      [{ priority: 'low', colour: 'red' }, 'UNKNOWN_CUSTOM_FIELD', 'custom_fields.colour'],
      [{ priority: 'low', badge: 'B-1' }, 'UNKNOWN_CUSTOM_FIELD', 'custom_fields.badge'],
    ];
    for (const [values, code, field] of cases) {
      const response = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest({ custom_fields: values }));
      expect([response.status, response.body.code, response.body.fields?.[0]?.field], JSON.stringify(values)).toEqual([400, code, field]);
    }
    const stop = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest({
      custom_fields: { priority: 'low' },
      stops: [{ type: 'pickup', point: { lat: 48.85, lng: 2.35 }, custom_fields: { gate_code: 42 } }],
    }));
    expect([stop.status, stop.body.fields?.[0]?.field]).toEqual([400, 'stops.0.custom_fields.gate_code']);
  });

  it('stores, returns, updates (null removes) and searches job and stop values', async () => {
    const job = (await createJob(sites.acme.as.dispatcher, {
      custom_fields: { priority: 'high', fragile: true, weight_kg: 12.5, deliver_on: '2026-12-24' },
      stops: [
        { type: 'pickup', order: 1, point: { lat: 48.85, lng: 2.35 }, custom_fields: { gate_code: 'B12' } },
        { type: 'dropoff', order: 0, point: { lat: 48.86, lng: 2.30 } },
      ],
    })) as unknown as WithValues;
    expect(job.custom_fields).toEqual({ priority: 'high', fragile: true, weight_kg: 12.5, deliver_on: '2026-12-24' });
    expect(job.stops!.map((s) => s.custom_fields)).toEqual([{}, { gate_code: 'B12' }]);
    await createJob(sites.acme.as.dispatcher, { custom_fields: { priority: 'low' } });

    const read = await sites.acme.as.dispatcher.get<One<WithValues>>(`/api/job/${job.id}`);
    expect(read.body.data.custom_fields.priority).toBe('high');
    const patched = await sites.acme.as.dispatcher.put<One<WithValues>>('/api/job', { id: job.id, custom_fields: { fragile: null, weight_kg: 3 }, stops: [{ id: job.stops![1]!.id, custom_fields: { gate_code: 'C7' } }] });
    expect(patched.status).toBe(200);
    expect(patched.body.data.custom_fields).toEqual({ priority: 'high', weight_kg: 3, deliver_on: '2026-12-24' });
    expect(patched.body.data.stops!.map((s) => s.custom_fields)).toEqual([{}, { gate_code: 'C7' }]);
    const clearRequired = await sites.acme.as.dispatcher.put<Failure>('/api/job', { id: job.id, custom_fields: { priority: null } });
    expect([clearRequired.status, clearRequired.body.code]).toEqual([400, 'CUSTOM_FIELD_REQUIRED']);
    const badStop = await sites.acme.as.dispatcher.put<Failure>(`/api/stop`, { id: job.stops![0]!.id, custom_fields: { gate_code: false } });
    expect([badStop.status, badStop.body.fields?.[0]?.field]).toEqual([400, 'custom_fields.gate_code']);

    const search = (filter: object) => sites.acme.as.dispatcher.get<Many<WithValues>>(`/api/job/search?custom_fields=${encodeURIComponent(JSON.stringify(filter))}`);
    expect((await search({ priority: 'high' })).body.data.map((j) => j.id)).toEqual([job.id]);
    expect((await search({ priority: 'high', weight_kg: 3 })).body.data.map((j) => j.id)).toEqual([job.id]);
    expect((await search({ priority: 'high', weight_kg: 4 })).body.data).toEqual([]);
    expect((await search({ priority: 'low' })).body.meta.pagination.totalItems).toBe(1);
    const duplicated = await sites.acme.as.dispatcher.post<{ succeeded: WithValues[] }>('/api/job/bulk/duplicate', { ids: [job.id] });
    expect(duplicated.body.succeeded.map((copy) => copy.custom_fields)).toEqual([{ priority: 'high', weight_kg: 3, deliver_on: '2026-12-24' }]);
    expect(duplicated.body.succeeded[0]!.stops!.map((s) => s.custom_fields)).toEqual([{}, { gate_code: 'C7' }]);
    const bad = await sites.acme.as.dispatcher.get<Failure>('/api/job/search?custom_fields=not-json');
    expect([bad.status, bad.body.code]).toEqual([400, 'INVALID_CUSTOM_FIELD_FILTER']);
  });

  it('a deactivated field is no longer required and accepts no new values', async () => {
    const list = await sites.acme.as.admin.get<Many<Definition>>('/api/customfield/search?entity_type=job&q=fragile');
    await sites.acme.as.admin.put('/api/customfield', { id: list.body.data[0]!.id, is_active: false });
    const refused = await sites.acme.as.dispatcher.post<Failure>('/api/job', jobRequest({ custom_fields: { priority: 'low', fragile: true } }));
    expect([refused.status, refused.body.code]).toEqual([400, 'CUSTOM_FIELD_INACTIVE']);
    await sites.acme.as.admin.put('/api/customfield', { id: list.body.data[0]!.id, is_active: true });
  });

  it('workers carry values too: validated, returned and searchable', async () => {
    await define(sites.acme, { entity_type: 'worker', key: 'shirt_size', label: 'Shirt', data_type: 'select', options: [{ value: 'm' }, { value: 'l' }] });
    const made = await sites.acme.as.dispatcher.post<One<WithValues>>('/api/worker', { email: 'w1@acme.example', first_name: 'W', custom_fields: { shirt_size: 'l' } });
    expect([made.status, made.body.data.custom_fields]).toEqual([201, { shirt_size: 'l' }]);
    const wrong = await sites.acme.as.dispatcher.put<Failure>('/api/worker', { id: made.body.data.id, custom_fields: { shirt_size: 'xxl' } });
    expect([wrong.status, wrong.body.code]).toEqual([400, 'INVALID_OPTION']);
    const found = await sites.acme.as.dispatcher.get<Many<WithValues>>(`/api/worker/search?custom_fields=${encodeURIComponent('{"shirt_size":"l"}')}`);
    expect(found.body.data.map((w) => w.id)).toEqual([made.body.data.id]);
  });
});
