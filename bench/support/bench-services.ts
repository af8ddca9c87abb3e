import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../app/config.ts';
import { createServices, type Services } from '../../app/services.ts';
import type { BenchDatabase } from './bench-database.ts';

/** Steps undone in reverse order when a benchmark ends, however it ends. */
export type Cleanups = { name: string; run: () => Promise<unknown> }[];

/**
 * The application's services for a benchmark: the bench database, Redis under a fresh key prefix (deleted at the
 * end), warnings only in the logs, no demo seed. `env` adds or overrides variables (NODE_ENV, PORT, ...).
 */
export async function startBenchServices(database: BenchDatabase, name: string, env: Record<string, string>, cleanups: Cleanups): Promise<Services> {
  const redisPrefix = `bench-${name}-${randomBytes(4).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'production',
    DATABASE_URL: database.url,
    SECRET_KEY: randomBytes(32).toString('hex'),
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_PREFIX: redisPrefix,
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    ...env,
  });
  const services = await createServices(config, { logDestination: process.stderr });
  cleanups.push({ name: 'close services', run: () => services.close() });
  const redis = services.redis!;
  cleanups.push({
    name: 'delete Redis keys',
    run: async () => {
      const keys = await redis.keys(`${redisPrefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
    },
  });
  return services;
}

/**
 * What every benchmark run starts with: a cleanup stack undone in reverse order however the run ends (Ctrl-C
 * included), and a warning when the machine is already busy (on 2 cores, anything else running skews every row).
 */
export function prepareRun(progress: (line: string) => void): { cleanups: Cleanups; cleanup: () => Promise<void>; loadBefore: number } {
  const cleanups: Cleanups = [];
  const cleanup = async () => {
    for (const step of cleanups.splice(0).toReversed()) {
      await step.run().catch((error: unknown) => progress(`cleanup "${step.name}" failed: ${String(error)}`));
    }
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  const loadBefore = os.loadavg()[0]!;
  if (loadBefore > 1) progress(`warning: 1-minute load average is ${loadBefore.toFixed(2)} before starting; results will be noisy`);
  return { cleanups, cleanup, loadBefore };
}
