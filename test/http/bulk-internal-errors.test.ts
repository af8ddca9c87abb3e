import { afterEach, describe, expect, it } from 'vitest';
import { createJob } from '../support/job-fixtures.ts';
import { useOneSite } from '../support/one-site.ts';

/**
 * A bulk call runs one transaction per job: when one job fails on the server's side (here a database error raised
 * by a trigger for that job alone, as a storage fault would) after others committed, the call answers them all in
 * its succeeded and failed parts (the failure as INTERNAL_ERROR) instead of a 500 that hides what committed. When
 * nothing succeeded, it is a 500 as any call's, and nothing changed.
 */
const site = useOneSite({ RATE_LIMIT_POINTS: '100000' });

type Parts<T> = { succeeded: T[]; failed: { id: string; error: string; code: string }[] };

/** Runs DDL as the database's owner (the application role owns the test database). */
const ddl = (sql: string) => site.server.services.db.orm.em.fork().execute(sql);

/** Makes every `op` on `table` for the row whose `column` is `id` fail with a database error. */
async function failFor(table: 'job' | 'dispatch', op: 'update' | 'insert', column: string, id: string): Promise<void> {
  await ddl(`create or replace function test_storage_fault() returns trigger language plpgsql as $$
    begin if new.${column} = '${id}' then raise exception 'simulated storage fault'; end if; return new; end $$`);
  await ddl(`create trigger test_storage_fault before ${op} on ${table} for each row execute function test_storage_fault()`);
}

afterEach(async () => {
  await ddl('drop trigger if exists test_storage_fault on job; drop trigger if exists test_storage_fault on dispatch; drop function if exists test_storage_fault()');
});

const phaseOf = async (id: string) => (await site.acme.as.dispatcher.get<{ data: { phase: string } }>(`/api/job/${id}`)).body.data.phase;

describe('a bulk call whose job fails on the server side', () => {
  it('POST /job/bulk/cancel reports the failed job as INTERNAL_ERROR beside the cancelled ones', async () => {
    const [a, b, c] = [await createJob(site.acme.as.dispatcher), await createJob(site.acme.as.dispatcher), await createJob(site.acme.as.dispatcher)];
    await failFor('job', 'update', 'id', b!.id);
    const response = await site.acme.as.dispatcher.post<Parts<string>>('/api/job/bulk/cancel', { ids: [a!.id, b!.id, c!.id] });
    expect(response.status).toBe(200);
    expect(response.body.succeeded).toEqual([a!.id, c!.id]);
    expect(response.body.failed).toEqual([{ id: b!.id, error: expect.stringContaining('Internal error'), code: 'INTERNAL_ERROR' }]);
    // The database's message (which can carry row data) stays in the log.
    expect(response.body.failed[0]!.error).not.toContain('simulated storage fault');
    expect([await phaseOf(a!.id), await phaseOf(b!.id), await phaseOf(c!.id)]).toEqual(['cancelled', 'unassigned', 'cancelled']);

    const alone = await site.acme.as.dispatcher.post<{ code: string }>('/api/job/bulk/cancel', { ids: [b!.id] });
    expect(alone.status).toBe(500);
    expect(alone.body.code).toBe('INTERNAL_ERROR');
    expect(await phaseOf(b!.id)).toBe('unassigned');
  });

  it('POST /dispatch/pool posts the others and lists the failed job', async () => {
    const [a, b] = [await createJob(site.acme.as.dispatcher), await createJob(site.acme.as.dispatcher)];
    await failFor('dispatch', 'insert', 'job_id', a!.id);
    const response = await site.acme.as.dispatcher.post<{ data: Parts<{ job_id: string }> }>('/api/dispatch/pool', { job_ids: [a!.id, b!.id] });
    expect(response.status).toBe(200);
    expect(response.body.data.succeeded.map((d) => d.job_id)).toEqual([b!.id]);
    expect(response.body.data.failed).toEqual([{ id: a!.id, error: expect.stringContaining('Internal error'), code: 'INTERNAL_ERROR' }]);
  });
});
