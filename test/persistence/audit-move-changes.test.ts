import { describe, expect, it } from 'vitest';
import { diff } from '../../persistence/audit.ts';
import { useAuditStorage } from '../support/audit-storage.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

type AuditRow = { entity_type: string; entity_id: string; action: string; changes: Record<string, unknown>; previous_data: Record<string, unknown> | null; new_data: Record<string, unknown> | null };

const site = useOneSite();
const storage = useAuditStorage(site);

describe("a move's audit records (stored without their diff)", () => {
  it('answer the diff of their before and after, as a stored diff read back, and store none', async () => {
    const { acme } = site;
    const job = await createJob(acme.as.dispatcher);
    const states = await stateIds(acme.as.dispatcher, 'job');
    // A cancel moves the job and cascades to its two stops: three moves, by the caller and by the system.
    expect((await acme.as.dispatcher.post('/api/job/state', { job_id: job.id, workflow_state_id: states.cancelled, cancellation_notes: 'no longer needed' })).status).toBe(200);
    const ids = [job.id, ...job.stops.map((stop) => stop.id)];
    const moves: AuditRow[] = [];
    for (const id of ids) {
      const page = await acme.as.admin.get<{ data: AuditRow[] }>(`/api/audit/search?entity_id=${id}&action=state_change`);
      expect(page.status).toBe(200);
      moves.push(...page.body.data);
    }
    expect(moves.map((m) => m.entity_id).sort()).toEqual([...ids].sort());
    for (const move of moves) {
      expect(move.changes.phase).toEqual({ from: move.previous_data?.phase, to: 'cancelled' });
      // State id, state, phase, version, event and role; and the reason given, which the stops' cancels carry too.
      expect(move.changes.reason).toEqual({ from: null, to: 'no longer needed' });
      expect(Object.keys(move.changes)).toHaveLength(7);
      // The same text as the diff written whole to the `jsonb` column answered, key order included.
      expect(JSON.stringify(move.changes)).toBe(await storage.asStoredJsonb(diff(move.previous_data, move.new_data)));
    }
    expect(await storage.storedChanges(acme.site.id, `action = 'state_change' and entity_id = any($1)`, [ids])).toEqual([null, null, null]);
  });
});
