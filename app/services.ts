import { Redis } from 'ioredis';
import pino, { type DestinationStream, type Logger } from 'pino';
import { systemClock, type Clock } from '../engine/clock.ts';
import { createEngine, type Engine } from '../engine/engine.ts';
import { createLocationTracker, type LocationTracker } from '../engine/drivers/driver-track-batcher.ts';
import { createOutboxRelay, type OutboxRelay } from '../engine/outbox/outbox-relay.ts';
import { createDurableQueue } from '../engine/queue/create-queue.ts';
import { createQueueSweeper, type QueueSweeper } from '../engine/queue/queue-sweeper.ts';
import type { DurableQueue } from '../engine/queue/durable-queue.ts';
import { CredentialCache } from '../http/auth/credential-cache.ts';
import { SignInThrottle } from '../http/auth/sign-in-throttle.ts';
import { RateLimiter } from '../http/rate-limit.ts';
import { SiteDirectory } from '../http/tenancy.ts';
import { openDatabase, type Database } from '../persistence/database.ts';
import { FieldCrypto } from '../persistence/field-crypto.ts';
import { createAttachmentStorage, type AttachmentStorage } from '../engine/attachments/attachment-storage.ts';
import type { Config } from './config.ts';

/** Everything a request, a job or a script needs, built once and passed in (never imported as singletons). */
export type Services = {
  config: Config;
  db: Database;
  logger: Logger;
  /** null without REDIS_URL. */
  redis: Redis | null;
  clock: Clock;
  rateLimiter: RateLimiter;
  /** Failed sign-ins per account and host (SIGNIN_FAILURE_*). */
  signInThrottle: SignInThrottle;
  credentials: CredentialCache;
  sites: SiteDirectory;
  /** The command path for jobs, stops and routes. */
  engine: Engine;
  /** Durable background work: BullMQ with REDIS_URL, else the queue_job table. */
  queue: DurableQueue;
  /** Moves committed outbox rows to the `events` queue; kicked after every command commit. */
  outboxRelay: OutboxRelay;
  /** With Redis: adds again the relayed jobs and webhook retries Redis lost (null on the table queue, which needs none). */
  queueSweeper: QueueSweeper | null;
  /** Encrypts secret columns (AES-256-GCM, key from SECRET_KEY). */
  crypto: FieldCrypto;
  /** Attachment files: the local disk behind signed URLs, or an S3-compatible bucket (ATTACHMENT_STORAGE). */
  attachments: AttachmentStorage;
  /** Applies streamed driver positions in group-committed batches (sockets; the REST path calls the same SQL). */
  locations: LocationTracker;
  close(): Promise<void>;
};

export type ServiceOverrides = { clock?: Clock; logDestination?: DestinationStream };

/** The composition root: opens the database (migrations are the caller's call) and Redis, builds the caches. */
export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  const logger = pino(
    {
      level: config.logLevel,
      base: { service: 'dispatch' },
      redact: { paths: ['*.password', '*.token', '*.api_key', '*.secret_key', '*.refresh_token', '*.access_token'], censor: '[redacted]' },
    },
    overrides.logDestination,
  );
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: true }) : null;
  const subscriber = redis ? redis.duplicate() : null;
  const clock = overrides.clock ?? systemClock;
  const engine = createEngine({ orm: db.orm, clock });
  engine.start();
  const queue = createDurableQueue({ orm: db.orm, logger, redis, redisPrefix: config.redisPrefix });
  const outboxRelay = createOutboxRelay({ orm: db.orm, queue, logger });
  engine.onCommit(() => outboxRelay.kick());
  const queueSweeper = queue.backend === 'bullmq'
    ? createQueueSweeper({ orm: db.orm, queue, logger, graceMs: config.queueSweep.graceSeconds * 1000, intervalMs: config.queueSweep.intervalSeconds * 1000 })
    : null;
  const locations = createLocationTracker({ orm: db.orm, logger, clock, throttle: config.realtime.trackThrottle });
  const credentials = new CredentialCache(redis, subscriber, config.redisPrefix);
  const sites = new SiteDirectory(db.orm);
  // Every site change invalidates credentials, and that reaches every process: the site directory clears with them.
  credentials.onClear(() => sites.invalidate());
  return {
    config,
    db,
    logger,
    redis,
    clock,
    engine,
    queue,
    outboxRelay,
    queueSweeper,
    crypto: new FieldCrypto(config.secretKey),
    attachments: createAttachmentStorage(config.attachments, config.secretKey),
    rateLimiter: new RateLimiter(redis, config.rateLimit.points, config.rateLimit.windowSeconds, config.redisPrefix),
    signInThrottle: new SignInThrottle(redis, config.signInFailures.limit, config.signInFailures.windowSeconds, config.redisPrefix),
    credentials,
    sites,
    locations,
    async close() {
      engine.stop();
      await locations.close();
      await outboxRelay.stop();
      await queueSweeper?.stop();
      // Waits for running jobs; the table queue still needs the database here.
      await queue.close();
      await db.close();
      subscriber?.disconnect();
      redis?.disconnect();
    },
  };
}
