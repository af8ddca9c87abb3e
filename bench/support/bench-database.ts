import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** The local superuser (trust auth): used only to create and drop the bench role and database, and to checkpoint. */
const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The server connects as this role, not as the superuser: a superuser bypasses row-level security even with FORCE,
 * so a bench run as `postgres` would skip the RLS predicates production pays for on every tenant query.
 */
const APP_ROLE = 'dispatch_bench_app';

export type BenchDatabase = { name: string; url: string; drop(): Promise<void> };

async function asAdmin<T>(work: (client: InstanceType<typeof Client>) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, empty database owned by the bench role; the caller migrates it through the application's own
 * migrator (no dependency on the tests' template database, which exists only after a test run).
 */
export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `dispatch_bench_${randomBytes(5).toString('hex')}`;
  await asAdmin(async (client) => {
    const role = await client.query('select 1 from pg_roles where rolname = $1', [APP_ROLE]);
    // The role is cluster-wide and harmless, so it is kept between runs (like the tests' role); databases are not.
    if (role.rowCount === 0) await client.query(`create role ${APP_ROLE} login nosuperuser nobypassrls`);
    await client.query(`create database ${name} owner ${APP_ROLE}`);
  });
  const url = new URL(ADMIN_URL);
  url.username = APP_ROLE;
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => asAdmin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

/**
 * Writes every dirty buffer out (CHECKPOINT) and lets the kernel's write-back drain, so a workload does not pay for
 * the pages the previous one dirtied: without it, the raw INSERT baseline measured after the command workloads ran
 * at half its first speed (its WAL fsyncs queued behind the write-back of ~200 MB of pages).
 */
export async function settleWrites(): Promise<void> {
  await asAdmin((client) => client.query('checkpoint'));
  await new Promise((resolve) => setTimeout(resolve, 2000));
}
