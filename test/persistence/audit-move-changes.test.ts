import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diff } from '../../persistence/audit.ts';
import { createJob, stateIds } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

type AuditRow = { entity_type: string; entity_id: string; action: string; changes: Record<string, unknown>; previous_data: Record<string, unknown> | null; new_data: Record<string, unknown> | null };

const site = useOneSite();
let db: Client;

beforeAll(async () => {
  db = new Client({ connectionString: site.server.databaseUrl });
  await db.connect();
});
afterAll(() => db.end());

/** `value` as a `jsonb` column gives it back (its keys in `jsonb`'s order): what a stored diff answered. */
async function asStoredJsonb(value: unknown): Promise<string> {
  const { rows } = await db.query<{ json: string }>('select $1::jsonb::text as json', [JSON.stringify(value)]);
  return JSON.stringify(JSON.parse(rows[0]!.json));
}

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
      expect(Object.keys(move.changes)).toHaveLength(6);
      // The same text as the diff written whole to the `jsonb` column answered, key order included.
      expect(JSON.stringify(move.changes)).toBe(await asStoredJsonb(diff(move.previous_data, move.new_data)));
    }
    await db.query('begin');
    try {
      await db.query(`select set_config('app.site_id', $1, true)`, [acme.site.id]);
      const stored = await db.query<{ changes: unknown }>(`select changes from audit_record where action = 'state_change' and entity_id = any($1)`, [ids]);
      expect(stored.rows.map((row) => row.changes)).toEqual([null, null, null]);
    } finally {
      await db.query('rollback');
    }
  });
});
