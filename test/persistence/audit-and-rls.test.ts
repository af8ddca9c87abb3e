import { Client, type QueryResult, type QueryResultRow } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTwoSites } from '../support/two-sites.ts';

type AuditPage = { data: { action: string; entity_type: string; entity_id: string; changes: Record<string, { from: unknown; to: unknown }>; previous_data: Record<string, unknown> | null; new_data: Record<string, unknown> | null; user_id: string | null }[] };

const sites = useTwoSites();
let db: Client;

beforeAll(async () => {
  db = new Client({ connectionString: sites.server.databaseUrl });
  await db.connect();
});
afterAll(() => db.end());

/** Runs SQL in a transaction bound to a tenant, as the application does. */
async function asTenant<T extends QueryResultRow>(siteId: string | null, sql: string, params: unknown[] = []): Promise<QueryResult<T>> {
  await db.query('begin');
  try {
    await db.query(`select set_config('app.site_id', $1, true)`, [siteId ?? '']);
    return await db.query<T>(sql, params);
  } finally {
    await db.query('rollback');
  }
}

describe('audit log', () => {
  it('records create and update with before, after and the diff, attributed to the caller', async () => {
    const created = await sites.acme.as.admin.post<{ data: { id: string } }>('/api/user', { email: 'audited@acme.example', role: 'driver', first_name: 'Ann' });
    await sites.acme.as.admin.put('/api/user', { id: created.body.data.id, first_name: 'Anna', password: 'a new password' });
    const response = await sites.acme.as.admin.get<AuditPage>(`/api/audit/search?entity_type=User&entity_id=${created.body.data.id}&sort=created_at`);
    expect(response.status).toBe(200);
    const [create, update] = response.body.data;
    expect(create).toMatchObject({ action: 'create', previous_data: null, new_data: expect.objectContaining({ first_name: 'Ann' }) });
    expect(update!.changes.first_name).toEqual({ from: 'Ann', to: 'Anna' });
    expect(update!.changes.password_hash).toEqual({ from: null, to: '[redacted]' });
    expect(JSON.stringify(response.body)).not.toContain('argon2');
    const me = await sites.acme.as.admin.get<{ data: { user: { id: string } } }>('/api/auth/me');
    expect(update!.user_id).toBe(me.body.data.user.id);
  });

  it('filters by user, action and time range', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const response = await sites.acme.as.admin.get<AuditPage>(`/api/audit/search?action=create&entity_type=Application&from=${since}`);
    expect(response.body.data.length).toBe(4);
    const none = await sites.acme.as.admin.get<AuditPage>(`/api/audit/search?to=${since}`);
    expect(none.body.data).toHaveLength(0);
  });

  it('is append-only: the database itself rejects UPDATE, DELETE and TRUNCATE', async () => {
    await expect(asTenant(sites.acme.site.id, `update audit_record set action = 'forged'`)).rejects.toThrow(/append-only/);
    await expect(asTenant(sites.acme.site.id, 'delete from audit_record')).rejects.toThrow(/append-only/);
    await expect(asTenant(sites.acme.site.id, 'truncate audit_record')).rejects.toThrow(/append-only/);
  });
});

describe('row-level security (the second wall)', () => {
  it('shows a tenant table nothing without a site bound, and only that site with one', async () => {
    const unbound = await db.query('select count(*)::int as n from application');
    expect(unbound.rows[0].n).toBe(0);
    const bound = await asTenant<{ site_id: string }>(sites.acme.site.id, 'select distinct site_id from application');
    expect(bound.rows).toEqual([{ site_id: sites.acme.site.id }]);
  });

  it("refuses to write a row into another site's tenant", async () => {
    const sql = `insert into mail_message (id, site_id, recipient, subject, body, created_at) values ('mail_x', $1, 'a@b.c', 's', 'b', now())`;
    await expect(asTenant(sites.acme.site.id, sql, [sites.globex.site.id])).rejects.toThrow(/row-level security/);
  });

  it('binds the application role too: it is neither a superuser nor BYPASSRLS', async () => {
    const role = await db.query('select rolsuper, rolbypassrls from pg_roles where rolname = current_user');
    expect(role.rows[0]).toEqual({ rolsuper: false, rolbypassrls: false });
  });
});
