import { Client } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createSiteFixture } from '../support/fixtures.ts';
import { jobRequest } from '../support/job-fixtures.ts';
import { urlFor } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

/**
 * SIGTERM (a deploy, a scale-down) while a request runs: its transaction may commit, and the client must get the
 * answer. Cut off, it sees a reset, retries, and creates the job twice. The request is made slow by a lock the test
 * holds on the `job` table; shutdown begins while it waits.
 */
let server: TestServer | null = null;
afterAll(() => server?.close());

describe('graceful shutdown', () => {
  it('a POST /job running when shutdown begins is committed and answered 201; a new connection is refused', async () => {
    server = await startTestServer({ RATE_LIMIT_POINTS: '100000', SHUTDOWN_GRACE_MS: '10000' });
    const acme = await createSiteFixture(server, 'acme');
    const locker = new Client({ connectionString: urlFor(server.database, 'postgres') });
    await locker.connect();
    try {
      const jobsBefore = Number((await locker.query('select count(*) as n from job')).rows[0].n);
      await locker.query('begin');
      await locker.query('lock table job in share row exclusive mode');
      const answer = acme.as.dispatcher.post<{ data: { id: string } }>('/api/job', jobRequest({})).then(
        (response) => response,
        (error: unknown) => error as Error,
      );
      await waitFor('the POST /job waiting for the lock', async () => {
        const waiting = await locker.query("select 1 from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'", [server!.database]);
        return (waiting.rowCount ?? 0) > 0;
      }, 10_000);

      const stopped = server.stopServing();
      await sleep(300);
      const refused = await acme.as.dispatcher.get('/api/job').then(() => null, (error: unknown) => error as Error);
      expect(String(refused)).toMatch(/ECONNREFUSED|ECONNRESET|socket hang up/);
      await locker.query('commit');

      const response = await answer;
      expect(response).not.toBeInstanceOf(Error);
      expect((response as Exclude<typeof response, Error>).status).toBe(201);
      await stopped;
      const created = (response as Exclude<typeof response, Error>).body.data.id;
      expect((await locker.query('select id from job where id = $1', [created])).rowCount).toBe(1);
      expect(Number((await locker.query('select count(*) as n from job')).rows[0].n)).toBe(jobsBefore + 1);
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
  }, 60_000);
});
