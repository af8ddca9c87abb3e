import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { inject } from 'vitest';

/** The superuser connection (local trust auth): only for creating roles and databases. */
export const ADMIN_URL = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Tests run as a non-superuser role without BYPASSRLS, so row-level security binds them as it binds production. */
export const APP_ROLE = 'dispatch_test_app';

export function urlFor(database: string, role = APP_ROLE): string {
  const url = new URL(ADMIN_URL);
  url.username = role;
  url.password = '';
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withAdmin<T>(work: (client: Client) => Promise<T>, database = 'postgres'): Promise<T> {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh database for one test file, cloned from the migrated template (fast: no migrations to run). */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `dispatch_test_${randomBytes(5).toString('hex')}`;
  await withAdmin((c) => c.query(`create database ${name} template ${inject('templateDatabase')} owner ${APP_ROLE}`));
  return {
    name,
    url: urlFor(name),
    drop: () => withAdmin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}
