/**
 * HTTP benchmark: an authenticated GET (`/api/auth/me` with an API key) and a list call (`/api/user/search`),
 * reported as req/s ratios against a raw `node:http` hello server measured in the same run with the same load.
 * Goal: `/api/auth/me` at 0.5× raw or better.
 *
 * Setup, and why:
 * - Both servers live in this process and are measured one after the other (never at once), so each gets the same
 *   main event loop to itself; the idle one costs nothing. Raw runs first and last; ratios use the mean of the two.
 * - autocannon runs in a child process (bench/support/load-process.ts): on a 2-core machine, running it on the main
 *   thread would make the server and the load generator share one event loop and measure both at once.
 * - The API talks to a fresh PostgreSQL database, migrated here and dropped at the end, as a non-superuser role (so
 *   row-level security applies), and to real Redis, where the rate limiter counts every request (RATE_LIMIT_POINTS
 *   is high enough that it never refuses).
 * - Per-request logs are off (LOG_LEVEL=warn) except for the rows marked [info logs], which rerun the API targets
 *   with the logger at info writing to /dev/null, to show what request logging costs.
 *
 * Run: `npm run bench` (about 70 s). Progress goes to stderr, the table to stdout, JSON to bench/results/.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { loadConfig } from '../app/config.ts';
import { startServer } from '../app/server.ts';
import { createServices } from '../app/services.ts';
import { prepareRun } from './support/bench-services.ts';
import { createBenchDatabase } from './support/bench-database.ts';
import { LoadGenerator, type LoadSettings, type Measurement, type Target } from './support/load.ts';
import { probe } from './support/probe.ts';
import { formatTable, writeResults, type Row } from './support/report.ts';
import { seedSite } from './support/seed.ts';

const SETTINGS: LoadSettings = { connections: 50, pipelining: 1, warmupSeconds: 2, durationSeconds: 8 };
const SUBDOMAIN = 'bench';
const PAGE_SIZE = 20;
const RESULTS_FILE = fileURLToPath(new URL('./results/http.json', import.meta.url));

const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** The baseline: the least a node:http server can do per request, with a JSON body like the API's. */
async function startRawServer(): Promise<{ port: number; close(): Promise<void> }> {
  const body = JSON.stringify({ hello: 'world' });
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.keepAliveTimeout = 65_000; // as app/server.ts, so neither server closes autocannon's connections
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function gitCommit(): string | null {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}+dirty` : head;
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const { cleanups, cleanup, loadBefore } = prepareRun(progress);
  try {
    const database = await createBenchDatabase();
    cleanups.push({ name: 'drop database', run: database.drop });
    progress(`created database ${database.name}`);
    const redisPrefix = `bench-${randomBytes(4).toString('hex')}`;
    const config = loadConfig({
      NODE_ENV: 'production',
      PORT: '0',
      BIND_ADDRESS: '127.0.0.1',
      BASE_DOMAIN: 'localhost',
      DATABASE_URL: database.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_PREFIX: redisPrefix,
      SECRET_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_POINTS: '100000000',
      // One window for the whole run, so the Redis counter can be checked against the requests sent.
      RATE_LIMIT_WINDOW_SECONDS: '3600',
      SEED_DEMO: 'false',
    });
    // Warnings reach stderr; in the [info logs] phase every line goes to /dev/null through pino's own sync
    // destination, which is what production logging to stdout costs minus the terminal.
    const devNull = pino.destination({ dest: '/dev/null', sync: true });
    let discardLogs = false;
    const services = await createServices(config, {
      logDestination: { write: (line: string) => (discardLogs ? devNull.write(line) : process.stderr.write(line)) },
    });
    cleanups.push({ name: 'close services', run: () => services.close() });
    const redis = services.redis!;
    cleanups.push({ name: 'delete Redis keys', run: async () => {
      const keys = await redis.keys(`${redisPrefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
    } });
    const migrations = await services.db.migrate();
    progress(`migrated (${migrations.length} migrations); seeding site "${SUBDOMAIN}"`);
    const { apiKey, applicationId } = await seedSite(services.db.orm, SUBDOMAIN, 40);
    const api = await startServer(services);
    cleanups.push({ name: 'close API server', run: () => api.close() });
    const raw = await startRawServer();
    cleanups.push({ name: 'close raw server', run: () => raw.close() });
    const load = new LoadGenerator(SETTINGS);
    cleanups.push({ name: 'stop load process', run: () => load.close() });

    // Every target gets the same request headers, so the raw server parses as many bytes as the API.
    const headers = { host: `${SUBDOMAIN}.localhost:${api.port}`, 'x-api-key': apiKey };
    const rawTarget: Target = { name: 'raw node:http', port: raw.port, path: '/', headers };
    const me: Target = { name: 'GET /api/auth/me', port: api.port, path: '/api/auth/me', headers };
    const search: Target = { name: `GET /api/user/search`, port: api.port, path: `/api/user/search?page_size=${PAGE_SIZE}`, headers };
    await probe(rawTarget);
    await probe(me);
    const page = (await probe(search)) as { data?: unknown[] };
    if (page.data?.length !== PAGE_SIZE) throw new Error(`user search returned ${page.data?.length} rows, expected a full page of ${PAGE_SIZE}`);
    progress(`servers up (raw :${raw.port}, API :${api.port}); ${SETTINGS.connections} connections, pipelining ${SETTINGS.pipelining}`);

    const measured: Measurement[] = [];
    for (const target of [rawTarget, me, search]) measured.push(await load.measure(target, progress));
    services.logger.level = 'info';
    discardLogs = true;
    for (const target of [me, search]) {
      measured.push(await load.measure({ ...target, name: `${target.name} [info logs]` }, progress));
    }
    services.logger.level = 'warn';
    discardLogs = false;
    // Raw again at the end: the ratios use the mean of both raw runs, and the two rows show how much the machine
    // drifted during the run (other work on 2 cores moves every number).
    measured.push(await load.measure({ ...rawTarget, name: `${rawTarget.name} (again)` }, progress));

    // The limiter falls back to memory if Redis fails: check that Redis really counted every API request.
    const counted = Number(await redis.get(`${redisPrefix}:rl:key:${applicationId}`));
    const isRaw = (m: Measurement) => m.path === rawTarget.path;
    const apiRequests = measured.filter((m) => !isRaw(m)).reduce((sum, m) => sum + m.requests, 0);
    if (!(counted >= apiRequests)) throw new Error(`Redis rate-limit counter is ${counted}, below the ${apiRequests} measured API requests`);
    progress(`rate limiter counted ${counted} requests in Redis (measured API requests: ${apiRequests}, rest are warm-ups and probes)`);

    const raws = measured.filter(isRaw);
    const baseline = raws.reduce((sum, m) => sum + m.requestsPerSecond.mean, 0) / raws.length;
    const rows: Row[] = measured.map((m) => ({ ...m, ratioToRaw: m.requestsPerSecond.mean / baseline }));
    const loadAverage = { before: loadBefore, after: os.loadavg()[0]! };
    const setup = [
      `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), commit ${gitCommit() ?? 'unknown'}, ` +
        `load average ${loadAverage.before.toFixed(2)} before / ${loadAverage.after.toFixed(2)} after`,
      `autocannon in a child process: ${SETTINGS.connections} connections, pipelining ${SETTINGS.pipelining}, ` +
        `${SETTINGS.warmupSeconds} s warm-up discarded, ${SETTINGS.durationSeconds} s measured per target`,
      'raw and API servers in this process, measured one after the other; ratios against the mean of both raw runs; all responses checked 2xx',
      `API: PostgreSQL as a non-superuser (RLS on), pool ${config.databasePoolSize}; rate limiter in Redis; ` +
        'per-request logs off (LOG_LEVEL=warn) except [info logs] rows (info to /dev/null)',
    ];
    process.stdout.write(`\n${setup.join('\n')}\n\n${formatTable(rows)}\n\n`);
    const goal = rows.find((row) => row.target === me.name)!.ratioToRaw >= 0.5 ? 'met' : 'NOT met';
    process.stdout.write(`goal (GET /api/auth/me at 0.5× raw or better): ${goal}\n`);
    writeResults(RESULTS_FILE, {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      commit: gitCommit(),
      settings: SETTINGS,
      loadAverage,
      setup,
      rawBaseline: baseline,
      rateLimiter: { store: 'redis', counted },
      results: rows,
    });
    progress(`wrote ${RESULTS_FILE}`);
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
