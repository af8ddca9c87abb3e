import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createBullmqQueue } from './bullmq-queue.ts';
import type { DurableQueue } from './durable-queue.ts';
import { createTableQueue } from './table-queue.ts';

export type QueueDependencies = {
  orm: MikroORM;
  logger: Logger;
  /** The application's Redis client (services.redis): null without REDIS_URL. */
  redis: Redis | null;
  /** config.redisPrefix. */
  redisPrefix: string;
  /** Table queue only: how often an idle consumer polls (ms). */
  pollIntervalMs?: number;
};

/**
 * Picks the durable queue backend once, at startup:
 *
 * - **BullMQ on Redis** when REDIS_URL is set (`redis` non-null). Several server processes share the work, and
 *   consumers are woken by Redis instead of polling. Keys live under `redisPrefix`.
 * - **The `queue_job` table** otherwise, on whatever database the server uses: the embedded PGlite (one process, the
 *   development and single-box mode) or a PostgreSQL without Redis (several processes are safe: claims use
 *   `FOR UPDATE SKIP LOCKED`). Consumers poll every `pollIntervalMs` (default 200 ms).
 *
 * Both keep jobs across restarts, retry with exponential backoff, honour delays and dedupe by job id. Jobs are not
 * moved between backends: switching REDIS_URL on or off leaves the other backend's pending jobs where they are.
 */
export function createDurableQueue(deps: QueueDependencies): DurableQueue {
  if (deps.redis) return createBullmqQueue({ redis: deps.redis, prefix: deps.redisPrefix, logger: deps.logger });
  return createTableQueue({ orm: deps.orm, logger: deps.logger, pollIntervalMs: deps.pollIntervalMs });
}
