import { describe, expect, it } from 'vitest';
import { diff } from '../../persistence/audit.ts';
import { createDriver, createTeam, createVehicle, jobAt } from '../http/dispatch-fixtures.ts';
import { useAuditStorage } from '../support/audit-storage.ts';
import { useOneSite } from '../support/one-site.ts';

type AuditRow = { id: string; entity_type: string; entity_id: string; action: string; changes: Record<string, unknown>; previous_data: Record<string, unknown> | null; new_data: Record<string, unknown> | null };
type TeamOutcome = { selected_driver_id: string; dispatch: { id: string; route_id: string } };

const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });
const storage = useAuditStorage(site);

describe("a dispatch's and its route's audit records (stored without their diff)", () => {
  it('answer the diff of their before and after, as a stored diff read back, and store none', async () => {
    const { acme, server } = site;
    const team = await createTeam(acme, 'Audit team');
    const vehicle = await createVehicle(acme);
    const driver = await createDriver(server, acme, { name: 'Audit Ada', at: { lat: 48.8566, lng: 2.3522 }, vehicleId: vehicle, teamIds: [team] });
    const dispatchAt = async () => {
      const response = await acme.as.dispatcher.post<{ data: TeamOutcome }>('/api/dispatch/team/job', { job_id: (await jobAt(acme.as.dispatcher, { lat: 48.86, lng: 2.35 })).id, team_id: team });
      expect(response.status).toBe(200);
      expect(response.body.data.selected_driver_id).toBe(driver.id);
      return response.body.data.dispatch;
    };
    // The first dispatch creates the driver's route for the day, the second joins it (`add_job`).
    const first = await dispatchAt();
    const second = await dispatchAt();
    const records: AuditRow[] = [];
    for (const id of [first.id, second.id, first.route_id]) {
      const page = await acme.as.admin.get<{ data: AuditRow[] }>(`/api/audit/search?entity_id=${id}`);
      expect(page.status).toBe(200);
      records.push(...page.body.data);
    }
    const actions = records.map((r) => `${r.entity_type}:${r.action}`);
    expect(actions).toEqual(expect.arrayContaining(['Dispatch:create', 'Route:create', 'Route:add_job']));
    const created = records.find((r) => r.entity_type === 'Dispatch' && r.action === 'create')!;
    expect(created.changes.status).toEqual({ from: null, to: created.new_data?.status });
    const joined = records.find((r) => r.action === 'add_job')!;
    expect(joined.changes.added_job_id).toEqual({ from: null, to: joined.new_data?.added_job_id });
    for (const record of records) {
      expect(Object.keys(record.changes).length).toBeGreaterThan(0);
      // The same text as the diff written whole to the `jsonb` column answered, key order included.
      expect(JSON.stringify(record.changes)).toBe(await storage.asStoredJsonb(diff(record.previous_data, record.new_data)));
    }
    const stored = await storage.storedChanges(acme.site.id, 'id = any($1)', [records.map((r) => r.id)]);
    expect(stored).toHaveLength(records.length);
    expect(stored.every((changes) => changes === null)).toBe(true);
  });
});
