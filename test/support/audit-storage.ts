import { Client } from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { OneSite } from './one-site.ts';

/** What the audit tests read straight from the database: a diff as `jsonb` gives it back, and the stored `changes`. */
export type AuditStorage = {
  /** `value` as a `jsonb` column gives it back (its keys in `jsonb`'s order): what a stored diff answered. */
  asStoredJsonb(value: unknown): Promise<string>;
  /** The `changes` column of the site's audit records matching `where` (`$1` onwards are `params`), as stored. */
  storedChanges(siteId: string, where: string, params: unknown[]): Promise<unknown[]>;
};

/** A plain `pg` client on the site's database for the file's tests (connected in `beforeAll`, closed in `afterAll`). */
export function useAuditStorage(site: OneSite): AuditStorage {
  let db: Client;
  beforeAll(async () => {
    db = new Client({ connectionString: site.server.databaseUrl });
    await db.connect();
  });
  afterAll(() => db.end());
  return {
    async asStoredJsonb(value) {
      const { rows } = await db.query<{ json: string }>('select $1::jsonb::text as json', [JSON.stringify(value)]);
      return JSON.stringify(JSON.parse(rows[0]!.json));
    },
    async storedChanges(siteId, where, params) {
      await db.query('begin');
      try {
        await db.query(`select set_config('app.site_id', $1, true)`, [siteId]);
        const { rows } = await db.query<{ changes: unknown }>(`select changes from audit_record where ${where}`, params);
        return rows.map((row) => row.changes);
      } finally {
        await db.query('rollback');
      }
    },
  };
}
