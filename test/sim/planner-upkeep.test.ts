import { Client } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { analyzeAsJobsDouble } from '../../sim/planner-upkeep.ts';
import { SimDatabases } from '../../sim/sim-database.ts';
import { ADMIN_URL, APP_ROLE } from '../support/postgres.ts';

const databases = new SimDatabases({ adminUrl: ADMIN_URL, appRole: APP_ROLE, template: inject('templateDatabase') });
afterAll(() => databases.close());

describe("the run database's planner upkeep", () => {
  it('analyzes the tables the day reads when the jobs created double, and not the write-only audit log and outbox', async () => {
    const database = await databases.fresh();
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const analyzed = async () => {
        const { rows } = await client.query<{ relname: string }>('select relname from pg_stat_user_tables where last_analyze is not null order by relname');
        return rows.map((r) => r.relname);
      };
      const afterJobCreated = analyzeAsJobsDouble(async (sql) => (await client.query(sql)).rows);
      for (let i = 0; i < 15; i += 1) await afterJobCreated();
      expect(await analyzed()).toEqual([]);
      await afterJobCreated();
      const tables = await analyzed();
      expect(tables).toEqual(expect.arrayContaining(['job', 'stop', 'address', 'route', 'dispatch', 'driver_state']));
      expect(tables).not.toContain('audit_record');
      expect(tables).not.toContain('outbox');
    } finally {
      await client.end();
      await database.drop();
    }
  });
});
