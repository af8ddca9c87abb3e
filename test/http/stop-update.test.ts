import { expect, it } from 'vitest';
import { createJob } from '../support/job-fixtures.ts';
import { useTwoSites } from '../support/two-sites.ts';

type Many<T> = { data: T[] };
type AuditRow = {
  action: string;
  entity_type: string;
  entity_id: string;
  changes: Record<string, { from: unknown; to: unknown }>;
  previous_data: Record<string, unknown> | null;
  new_data: Record<string, unknown> | null;
};

const sites = useTwoSites();

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
