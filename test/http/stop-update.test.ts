import { expect, it } from 'vitest';
import { createJob } from '../support/job-fixtures.ts';
import { withAdmin } from '../support/postgres.ts';
import { useTwoSites } from '../support/two-sites.ts';

type Many<T> = { data: T[] };
type Failure = { code: string; fields?: { field: string }[] };
type AuditRow = {
  action: string;
  entity_type: string;
  entity_id: string;
  changes: Record<string, { from: unknown; to: unknown }>;
  previous_data: Record<string, unknown> | null;
  new_data: Record<string, unknown> | null;
};

const sites = useTwoSites();

const refusal = (response: { status: number; body: Failure }) => [response.status, response.body.code, response.body.fields?.[0]?.field];

it('PUT /stop is in the audit log: an update of the Stop with its before, after and diff', async () => {
  const { dispatcher, admin } = sites.acme.as;
  const job = await createJob(dispatcher);
  const stopId = job.stops[0]!.id;

  const updated = await dispatcher.put('/api/stop', { id: stopId, contact_name: 'Gate keeper', internal_notes: 'code 4711' });
  expect(updated.status).toBe(200);

  const audit = await admin.get<Many<AuditRow>>(`/api/audit/search?entity_id=${stopId}`);
  expect(audit.status).toBe(200);
  const updates = audit.body.data.filter((record) => record.action === 'update');
  expect(updates).toHaveLength(1);
  expect(updates[0]).toMatchObject({
    entity_type: 'Stop',
    entity_id: stopId,
    changes: { contact_name: { from: null, to: 'Gate keeper' }, internal_notes: { from: null, to: 'code 4711' } },
    previous_data: { id: stopId, contact_name: null, internal_notes: null },
    new_data: { id: stopId, contact_name: 'Gate keeper', internal_notes: 'code 4711' },
  });
});

it("a stop edit refuses another site's address_id (404 naming it) even where row-level security does not hide it, as on PGlite", async () => {
  const { dispatcher } = sites.acme.as;
  const foreign = await sites.globex.as.dispatcher.post<{ data: { id: string } }>('/api/address', { street_address: '1 Globex Way', city: 'Lyon', point: { lat: 45.76, lng: 4.83 } });
  expect(foreign.status).toBe(201);
  const job = await createJob(dispatcher);
  const stop = job.stops[0] as unknown as { id: string; address_id: string };

  // PGlite runs as its superuser, whom row-level security does not bind. The table's owner (the application role
  // here) is let past it the same way once the policy is no longer forced on it: only the tenant filter is left.
  const forcePolicy = (force: boolean) => withAdmin((client) => client.query(`alter table address ${force ? '' : 'no '}force row level security`), sites.server.database);
  await forcePolicy(false);
  try {
    const put = await dispatcher.put<Failure>('/api/stop', { id: stop.id, address_id: foreign.body.data.id });
    const patch = await dispatcher.send<Failure>('PATCH', `/api/job/${job.id}`, { stops: [{ id: stop.id, address_id: foreign.body.data.id }] });
    expect([refusal(put), refusal(patch)]).toEqual([
      [404, 'NOT_FOUND', 'address_id'],
      [404, 'NOT_FOUND', 'stops.0.address_id'],
    ]);
  } finally {
    await forcePolicy(true);
  }
  const read = await dispatcher.get<{ data: { address_id: string } }>(`/api/stop?id=${stop.id}`);
  expect(read.body.data.address_id).toBe(stop.address_id);
});
