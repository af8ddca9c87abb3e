import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../app/config.ts';
import { openDatabase } from '../../persistence/database.ts';
import { APP_ROLE, urlFor, withAdmin } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/**
 * Once per run: the application role (not a superuser, no BYPASSRLS) and a template database migrated by it, so
 * every test file clones a ready schema. The template is this run's own, so parallel runs never collide. Fails
 * loudly if PostgreSQL or Redis is down: no suite is silently skipped.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const template = `dispatch_tmpl_${randomBytes(4).toString('hex')}`;
  await withAdmin(async (client) => {
    const role = await client.query('select 1 from pg_roles where rolname = $1', [APP_ROLE]);
    if (role.rowCount === 0) await client.query(`create role ${APP_ROLE} login nosuperuser nobypassrls createdb`);
    await client.query(`create database ${template} owner ${APP_ROLE}`);
  });
  const config = loadConfig({ NODE_ENV: 'test', SECRET_KEY: 'x'.repeat(32) });
  const db = await openDatabase({ databaseUrl: urlFor(template), dataDir: config.dataDir, poolSize: 1 });
  try {
    await db.migrate();
  } finally {
    await db.close();
  }
  const { Redis } = await import('ioredis');
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  try {
    await redis.ping();
  } finally {
    redis.disconnect();
  }
  project.provide('templateDatabase', template);
  return async () => {
    await withAdmin((client) => client.query(`drop database if exists ${template} with (force)`));
  };
}
