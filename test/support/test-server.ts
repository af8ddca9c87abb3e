import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../app/config.ts';
import { startServer } from '../../app/server.ts';
import { createServices, type Services } from '../../app/services.ts';
import { ApiClient } from './http-client.ts';
import { createTestDatabase } from './postgres.ts';
import { TestClock } from './test-clock.ts';

export type TestServer = {
  services: Services;
  port: number;
  clock: TestClock;
  database: string;
  databaseUrl: string;
  /** Every log line the server wrote, as text. */
  logs: string[];
  /** A client on a site's host (`null`: the platform host). */
  client(site: string | null): ApiClient;
  /** What SIGTERM does first: stop serving (running requests are answered within SHUTDOWN_GRACE_MS); `close` still follows. */
  stopServing(): Promise<void>;
  close(): Promise<void>;
};

/**
 * A real server for one test file: its own database (cloned from the migrated template), real Redis under a key
 * prefix of its own, a random port, response-schema checking on, and logs captured for inspection.
 */
export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const database = await createTestDatabase();
  const logs: string[] = [];
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    BIND_ADDRESS: '127.0.0.1',
    BASE_DOMAIN: 'localhost',
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: '5',
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `test-${randomBytes(4).toString('hex')}`,
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
    RESPONSE_VALIDATION: 'true',
    SEED_DEMO: 'false',
    ...env,
  });
  const clock = new TestClock();
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const services = await createServices(config, { clock, logDestination });
  const running = await startServer(services);
  return {
    services,
    port: running.port,
    clock,
    database: database.name,
    databaseUrl: database.url,
    logs,
    client: (site) => new ApiClient(running.port, site),
    stopServing: () => running.close(),
    async close() {
      await running.close();
      await services.close();
      await database.drop();
    },
  };
}
