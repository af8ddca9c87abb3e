/**
 * HTTP benchmark: an authenticated GET (`/api/auth/me` with an API key), list calls (`/api/user/search`,
 * `/api/job/search` for a page of 20 jobs with their stops, `/api/worker/search` for a page of 20 workers) and a
 * job's detail (`/api/job/{id}`: the job, its two stops and their addresses),
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
 * - A bare h3 app with one hello route, mounted like the API, shows the framework's own ceiling.
 * - Besides req/s, each row reports this process's CPU time per request served (process.cpuUsage over the run,
 *   warm-up included, divided by the requests the server counted). On 2 cores shared with other work, req/s moves
 *   with whatever else runs; CPU per request barely does, and it is what req/s is on an idle machine, where the
 *   server saturates one core. The CPU ratio (raw's CPU per request / the target's) is the load-independent twin
 *   of the req/s ratio. It includes what the API process does meanwhile (pools, workers' polling): its real cost.
 * - BENCH_CPU_PROFILE=<file> writes a V8 CPU profile of the `/api/auth/me` run (see `profiled`).
 *
 * Run: `npm run bench:http` (about 100 s; `BENCH_QUICK=1 BENCH_SECONDS=4` for a ~25 s loop of raw, h3 and `/auth/me`). Progress goes to stderr, the table to stdout, JSON to bench/results/.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { loadConfig } from '../app/config.ts';
import { startServer } from '../app/server.ts';
import { createServices } from '../app/services.ts';
import { prepareRun } from './support/bench-services.ts';
import { createBenchDatabase } from './support/bench-database.ts';
import { startCpuProfile } from './support/cpu-profile.ts';
import { gitCommit, machineLine } from './support/environment.ts';
import { requestCounter, startBareH3Server, startRawServer } from './support/hello-servers.ts';
import { LoadGenerator, type LoadSettings, type Measurement, type Target } from './support/load.ts';
import { probe } from './support/probe.ts';
import { formatTable, writeResults, type Row } from './support/report.ts';
import { seedSite } from './support/seed.ts';

/** BENCH_SECONDS shortens the measured runs while iterating (the README's figures use the default 8 s). */
const SETTINGS: LoadSettings = { connections: 50, pipelining: 1, warmupSeconds: 2, durationSeconds: Number(process.env.BENCH_SECONDS ?? 8) };
/** BENCH_QUICK=1 measures only raw, bare h3 and `/auth/me` (no list call, no [info logs] rows): a short loop for profiling. */
const QUICK = process.env.BENCH_QUICK === '1';
const SUBDOMAIN = 'bench';
const PAGE_SIZE = 20;
/** The job the detail read reads: a customer found or created by email, a pickup and a dropoff with inline addresses. */
const JOB = {
  customer_email: 'buyer@bench.example',
  customer_first_name: 'Bea',
  stops: [
    { type: 'pickup', street_address: '10 Rue de Rivoli', city: 'Paris', point: { lat: 48.8556, lng: 2.3522 } },
    { type: 'dropoff', street_address: '5 Avenue Montaigne', city: 'Paris', point: { lat: 48.8662, lng: 2.3047 } },
  ],
};
const RESULTS_FILE = fileURLToPath(new URL('./results/http.json', import.meta.url));

const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

type CpuMeasurement = Measurement & { cpuMicrosPerRequest: number };

const isApi = (m: Measurement) => m.path.startsWith('/api/');

/**
 * With BENCH_CPU_PROFILE=<file.cpuprofile>, `work` runs under the V8 CPU profiler (open the file in Chrome DevTools
 * or speedscope): this is how to see where an API request's time goes. Without it, `work` just runs.
 */
async function profiled<T>(work: () => Promise<T>): Promise<T> {
  const file = process.env.BENCH_CPU_PROFILE;
  const profiler = await startCpuProfile(file);
  try {
    return await work();
  } finally {
    await profiler.stop();
    if (file) progress(`wrote CPU profile ${file}`);
  }
}

/** Second table: CPU time per request and its ratio to raw's, the figures that do not move with the machine's load. */
function formatCpuTable(rows: (Measurement & CpuMeasurement & { cpuRatioToRaw: number })[]): string {
  const width = Math.max(...rows.map((row) => row.target.length));
  const lines = rows.map((row) =>
    `${row.target.padEnd(width)}  ${row.cpuMicrosPerRequest.toFixed(1).padStart(10)}  ${`${row.cpuRatioToRaw.toFixed(row.cpuRatioToRaw < 0.1 ? 3 : 2)}×`.padStart(12)}`,
  );
  return [`${'target'.padEnd(width)}  ${'CPU µs/req'.padStart(10)}  ${'CPU ratio'.padStart(12)}`, ...lines].join('\n');
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
    const bareH3 = await startBareH3Server();
    cleanups.push({ name: 'close bare h3 server', run: () => bareH3.close() });
    const load = new LoadGenerator(SETTINGS);
    cleanups.push({ name: 'stop load process', run: () => load.close() });

    // Every target gets the same request headers, so the raw server parses as many bytes as the API.
    const headers = { host: `${SUBDOMAIN}.localhost:${api.port}`, 'x-api-key': apiKey };
    const rawTarget: Target = { name: 'raw node:http', port: raw.port, path: '/', headers };
    const h3Target: Target = { name: 'bare h3 hello', port: bareH3.port, path: '/', headers };
    const me: Target = { name: 'GET /api/auth/me', port: api.port, path: '/api/auth/me', headers };
    const search: Target = { name: `GET /api/user/search`, port: api.port, path: `/api/user/search?page_size=${PAGE_SIZE}`, headers };
    await probe(rawTarget);
    await probe(h3Target);
    await probe(me);
    const page = QUICK ? { data: Array.from({ length: PAGE_SIZE }) } : ((await probe(search)) as { data?: unknown[] });
    // A page of two-stop jobs, created as a dispatch console creates them, for the detail read and the job search.
    const created: string[] = [];
    for (let i = 0; i < PAGE_SIZE; i++) created.push(((await probe({ ...me, name: 'POST /api/job', path: '/api/job' }, JOB)) as { data: { id: string } }).data.id);
    // A page of workers, made from new drivers as an office adds them, for the worker search.
    for (let i = 0; i < PAGE_SIZE; i++) await probe({ ...me, name: 'POST /api/worker', path: '/api/worker' }, { email: `worker${i}@bench.example`, first_name: `Worker${i}`, skills: ['van'] });
    const workerSearch: Target = { name: 'GET /api/worker/search', port: api.port, path: `/api/worker/search?skill=van&page_size=${PAGE_SIZE}`, headers };
    if (((await probe(workerSearch)) as { data: unknown[] }).data.length !== PAGE_SIZE) throw new Error(`worker search did not return a full page of ${PAGE_SIZE}`);
    const jobRead: Target = { name: 'GET /api/job/{id}', port: api.port, path: `/api/job/${created[0]}`, headers };
    const jobSearch: Target = { name: 'GET /api/job/search', port: api.port, path: `/api/job/search?phase=unassigned&page_size=${PAGE_SIZE}`, headers };
    await probe(jobRead);
    if (((await probe(jobSearch)) as { data: unknown[] }).data.length !== PAGE_SIZE) throw new Error(`job search did not return a full page of ${PAGE_SIZE}`);
    if (page.data?.length !== PAGE_SIZE) throw new Error(`user search returned ${page.data?.length} rows, expected a full page of ${PAGE_SIZE}`);
    progress(`servers up (raw :${raw.port}, API :${api.port}); ${SETTINGS.connections} connections, pipelining ${SETTINGS.pipelining}`);

    const served = { raw: requestCounter(raw.server), h3: requestCounter(bareH3.server), api: requestCounter(api.server) };
    const measure = async (target: Target, count: () => number, wrap = <T>(work: () => Promise<T>) => work()): Promise<CpuMeasurement> => {
      const before = count();
      const cpuBefore = process.cpuUsage();
      const measurement = await wrap(() => load.measure(target, progress));
      const cpu = process.cpuUsage(cpuBefore);
      return { ...measurement, cpuMicrosPerRequest: (cpu.user + cpu.system) / (count() - before) };
    };
    const measured: CpuMeasurement[] = [];
    measured.push(await measure(rawTarget, served.raw));
    measured.push(await measure(h3Target, served.h3));
    measured.push(await measure(me, served.api, profiled));
    if (!QUICK) {
      measured.push(await measure(search, served.api));
      measured.push(await measure(jobRead, served.api));
      measured.push(await measure(jobSearch, served.api));
      measured.push(await measure(workerSearch, served.api));
      services.logger.level = 'info';
      discardLogs = true;
      for (const target of [me, search]) measured.push(await measure({ ...target, name: `${target.name} [info logs]` }, served.api));
      services.logger.level = 'warn';
      discardLogs = false;
    }
    // Raw again at the end: the ratios use the mean of both raw runs, and the two rows show how much the machine
    // drifted during the run (other work on 2 cores moves every number).
    measured.push(await measure({ ...rawTarget, name: `${rawTarget.name} (again)` }, served.raw));

    // The limiter falls back to memory if Redis fails: check that Redis really counted every API request.
    const counted = Number(await redis.get(`${redisPrefix}:rl:key:${applicationId}`));
    const isRaw = (m: Measurement) => m.target.startsWith(rawTarget.name);
    const apiRequests = measured.filter(isApi).reduce((sum, m) => sum + m.requests, 0);
    if (!(counted >= apiRequests)) throw new Error(`Redis rate-limit counter is ${counted}, below the ${apiRequests} measured API requests`);
    progress(`rate limiter counted ${counted} requests in Redis (measured API requests: ${apiRequests}, rest are warm-ups and probes)`);

    const raws = measured.filter(isRaw);
    const baseline = raws.reduce((sum, m) => sum + m.requestsPerSecond.mean, 0) / raws.length;
    const rawCpu = raws.reduce((sum, m) => sum + m.cpuMicrosPerRequest, 0) / raws.length;
    const rows: (Row & CpuMeasurement & { cpuRatioToRaw: number })[] = measured.map((m) => ({
      ...m,
      ratioToRaw: m.requestsPerSecond.mean / baseline,
      cpuRatioToRaw: rawCpu / m.cpuMicrosPerRequest,
    }));
    const loadAverage = { before: loadBefore, after: os.loadavg()[0]! };
    const setup = [
      machineLine(loadBefore),
      `autocannon in a child process: ${SETTINGS.connections} connections, pipelining ${SETTINGS.pipelining}, ` +
        `${SETTINGS.warmupSeconds} s warm-up discarded, ${SETTINGS.durationSeconds} s measured per target`,
      'raw, bare h3 and API servers in this process, measured one after the other; ratios against the mean of both raw runs; all responses checked 2xx',
      `API: PostgreSQL as a non-superuser (RLS on), pool ${config.databasePoolSize}; rate limiter in Redis; ` +
        'per-request logs off (LOG_LEVEL=warn) except [info logs] rows (info to /dev/null)',
    ];
    process.stdout.write(`\n${setup.join('\n')}\n\n${formatTable(rows)}\n\n${formatCpuTable(rows)}\n\n`);
    const meRow = rows.find((row) => row.target === me.name)!;
    const h3Row = rows.find((row) => row.target === h3Target.name)!;
    process.stdout.write(
      `goal (GET /api/auth/me at 0.5× raw or better): ${meRow.ratioToRaw >= 0.5 ? 'met' : 'NOT met'} in req/s (${meRow.ratioToRaw.toFixed(2)}×), ` +
        `${meRow.cpuRatioToRaw >= 0.5 ? 'met' : 'NOT met'} in CPU per request (${meRow.cpuRatioToRaw.toFixed(2)}×); ` +
        `bare h3 hello: ${h3Row.ratioToRaw.toFixed(2)}× req/s, ${h3Row.cpuRatioToRaw.toFixed(2)}× CPU\n`,
    );
    // A quick run is not a result to keep.
    if (!QUICK) writeResults(RESULTS_FILE, {
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
    if (!QUICK) progress(`wrote ${RESULTS_FILE}`);
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
