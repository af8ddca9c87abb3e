import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCATION_STATEMENT, locationArguments, type LocationRow, type TimedFix } from '../../../engine/drivers/driver-track-sql.ts';
import { createSiteFixture, type SiteFixture } from '../../support/fixtures.ts';
import { withAdmin } from '../../support/postgres.ts';
import { startTestServer, type TestServer } from '../../support/test-server.ts';

/**
 * The plans behind the location path's cost per fix (issue 5): the position log's trigger (migration 0021), the
 * track probe's index range, and the driver probe's index once the table has rows. Each of these once made a batch
 * read far more than its own drivers' rows.
 */
let server: TestServer;
let acme: SiteFixture;
const DRIVERS = 1500;
const driverId = (i: number) => `usr_plan_${i}`;
/** A fix of driver 7 recorded at `ms`. */
const fix = (ms: number): TimedFix => ({ userId: driverId(7), ping: { lat: 48.9, lng: 2.4, recorded_at: new Date(ms).toISOString() }, recordedAtMs: ms });

beforeAll(async () => {
  server = await startTestServer();
  acme = await createSiteFixture(server, 'acme');
  await withAdmin(
    (admin) =>
      admin.query(`insert into app_user (id, email, is_service_account, created_at, updated_at)
        select 'usr_plan_' || g, 'plan' || g || '@acme.example', true, now(), now() from generate_series(0, ${DRIVERS - 1}) g`),
    server.database,
  );
}, 60_000);
afterAll(() => server.close());

/** Runs `work` on a superuser connection to the test database that reports every plan, nested ones included. */
async function withPlansReported(work: (client: Client, plans: string[]) => Promise<void>): Promise<void> {
  await withAdmin(async (client) => {
    const plans: string[] = [];
    client.on('notice', (notice) => void plans.push(String(notice.message)));
    await client.query(`load 'auto_explain'`);
    await client.query(`set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set client_min_messages = log`);
    await work(client, plans);
  }, server.database);
}

/** Runs `work` on a connection of the application's role, bound to acme, with the location statement prepared. */
async function withStatementPrepared(work: (client: Client, literal: (value: string) => string) => Promise<void>): Promise<void> {
  const client = new Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    const literal = (value: string) => client.escapeLiteral(value);
    await client.query(`select set_config('app.site_id', ${literal(acme.site.id)}, false), set_config('app.platform', '', false)`);
    await client.query(`prepare ${LOCATION_STATEMENT.name} (${LOCATION_STATEMENT.types.join(', ')}) as ${LOCATION_STATEMENT.sql}`);
    await work(client, literal);
  } finally {
    await client.end();
  }
}

const upsert = (ids: string, lat: string) => `insert into driver_state (site_id, user_id, last_lat, last_lng, last_recorded_at, updated_at)
  select '${acme.site.id}', id, ${lat}, 2.35, now(), now() from (${ids}) d(id)
  on conflict (site_id, user_id) do update set last_lat = excluded.last_lat, last_recorded_at = excluded.last_recorded_at`;

describe('location statement plans', () => {
  it('logs positions with a join that stays linear whatever the connection’s first write was', async () => {
    await withPlansReported(async (client, plans) => {
      // The connection's first write moves nobody (a new driver's first fix is an insert): PL/pgSQL plans the log's
      // join now, for empty transition tables, and keeps that plan for the session.
      await client.query(upsert(`values ('${driverId(0)}')`, '48.85'));
      await client.query(upsert(`select 'usr_plan_' || g from generate_series(1, ${DRIVERS - 1}) g`, '48.85'));
      plans.length = 0;
      await client.query(upsert(`select 'usr_plan_' || g from generate_series(0, ${DRIVERS - 1}) g`, '48.86'));
      const logInsert = plans.filter((plan) => plan.includes('Insert on driver_position_change'));
      expect(logInsert).toHaveLength(1);
      expect(logInsert[0]).not.toContain('Nested Loop');
      const { rows } = await client.query<{ moved: number }>(`select cardinality(user_ids) as moved from driver_position_change order by change_xid desc limit 1`);
      expect(rows[0]!.moved).toBe(DRIVERS);
    });
  });

  it('probes the track by a range of the primary key and the drivers by it, under row-level security', async () => {
    await withStatementPrepared(async (client, literal) => {
      await client.query(`set plan_cache_mode = force_generic_plan`);
      const now = Date.now();
      const fixes: TimedFix[] = [0, 1].map((i) => ({ userId: driverId(i), ping: { lat: 48.9, lng: 2.4, recorded_at: new Date(now).toISOString() }, recordedAtMs: now }));
      const args = locationArguments(acme.site.id, fixes, fixes, now, { intervalSeconds: 30, distanceMeters: 200 }, literal);
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain execute ${LOCATION_STATEMENT.name}(${args.join(', ')})`);
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      // Computed bounds are not leakproof, so they stayed a filter over every point the driver ever stored.
      expect(plan).toMatch(/Index Scan using track_point_pkey on track_point t\s+\([^)]*\)\n\s+Index Cond: \(.*recorded_at > .*recorded_at < /);
      // With rows in the table (this file wrote 1,500), the generic plan tells the primary key from (site_id, change_xid).
      expect(plan).toContain('Index Scan using driver_state_pkey on driver_state');
      expect(plan).not.toContain('driver_state_change_xid_idx');
    });
  });

  it('ships back a driver’s last fix only when it could make a fix of the batch stale or a duplicate', async () => {
    await withStatementPrepared(async (client, literal) => {
      const throttle = { intervalSeconds: 30, distanceMeters: 200 };
      /** The last applied fixes the statement returns for a batch of `fixes` (the driver's newest is its last). */
      const lastFixes = async (...fixes: TimedFix[]) => {
        const args = locationArguments(acme.site.id, [fixes.at(-1)!], [], Math.min(...fixes.map((f) => f.recordedAtMs)), throttle, literal);
        const { rows } = await client.query<LocationRow>(`execute ${LOCATION_STATEMENT.name}(${args.join(', ')})`);
        return rows.filter((row) => row.kind === 'before').map((row) => row.t);
      };
      const at = Date.now() + 60_000;
      await lastFixes(fix(at));
      // In order: nothing to compare with, nothing shipped.
      expect(await lastFixes(fix(at + 1000))).toEqual([]);
      // The same fix again, an older one, or a batch reaching back before it: the stored fix comes back.
      expect(await lastFixes(fix(at + 1000))).toEqual([at + 1000]);
      expect(await lastFixes(fix(at))).toEqual([at + 1000]);
      expect(await lastFixes(fix(at + 500), fix(at + 2000))).toEqual([at + 1000]);
    });
  });
});
