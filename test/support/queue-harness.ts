import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createOrganization } from '../../engine/admin/organization.service.ts';
import { createSite } from '../../engine/admin/site.service.ts';
import { openDatabase } from '../../persistence/database.ts';
import { inTenantScope } from '../../persistence/tenant-scope.ts';
import { createTestDatabase } from './postgres.ts';
import { deleteRedisKeys } from './redis-keys.ts';

export type QueueHarness = {
  orm: MikroORM;
  redis: Redis;
  /** This file's own Redis key prefix. */
  redisPrefix: string;
  logger: Logger;
  /** Log lines at warn and above, as text. */
  logs: string[];
  /** A site (through the admin service), for rows that need one, such as outbox rows. */
  createSite(subdomain: string): Promise<{ id: string }>;
  close(): Promise<void>;
};

/**
 * Only what queues and the outbox relay depend on: a database cloned from the migrated template (as the app's role,
 * so RLS binds), real Redis under a prefix of its own, and a logger. No server, so no relay or consumer of the app's
 * own competes with the ones a test builds.
 */
export async function openQueueHarness(): Promise<QueueHarness> {
  const database = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: database.url, dataDir: tmpdir(), poolSize: 5 });
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
  const redisPrefix = `test-${randomBytes(4).toString('hex')}`;
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const actor = { userId: null, applicationId: null, requestId: 'queue-harness' };
  return {
    orm: db.orm,
    redis,
    redisPrefix,
    logger: pino({ level: 'warn' }, destination),
    logs,
    createSite: (subdomain) =>
      inTenantScope(db.orm, { siteId: null, platform: true }, async (em) => {
        const organization = await createOrganization(em, actor, { name: `${subdomain} org` });
        return createSite(em, actor, { name: subdomain, organization_id: organization.id, subdomain });
      }),
    async close() {
      await deleteRedisKeys(redis, redisPrefix);
      redis.disconnect();
      await db.close();
      await database.drop();
    },
  };
}
