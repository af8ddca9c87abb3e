/**
 * Realtime benchmark (issue 5): N simulated driver apps at 1 Hz each (N = 1,000 and 5,000) on `/driver`, through the
 * whole location path (handshake with an API key, validation, per-driver quota, group-committed apply in
 * PostgreSQL, throttled track points, broadcast to the dispatch room, Redis adapter), beside a bare socket.io echo
 * server (acks every `location` at once) measured in the same run by the same clients.
 * Goals: 5k drivers at 1 Hz with p99 ack < 25 ms and ≤ 40 KB of server memory per connection; the full path's
 * capacity ≥ 0.5× the echo server's.
 *
 * Setup, and why:
 * - The clients run in a child process (bench/support/realtime-clients.ts), so the server's event loop, CPU time and
 *   memory are its own. One socket per simulated driver, WebSocket transport, each with its own API key.
 * - Fresh PostgreSQL database as a non-superuser role (row-level security on), Redis under a fresh prefix (the
 *   socket.io Redis adapter is on, as with REDIS_URL in production). Both deleted at the end.
 * - 1 Hz phase: after a 2 s warm-up at the same rate (discarded; its p50/p99 are printed in the progress), every
 *   socket sends one fix a second for 10 s, phases spread evenly (open loop, acks awaited
 *   asynchronously); latency = emit → ack in the client. Server CPU = the Node process's user+system time over the
 *   phase (PostgreSQL's and Redis's CPU are not in it); PG µs/ack = the CPU time of the PostgreSQL backends serving
 *   the bench database over the phase, per ack (the figure to compare across runs on a shared machine).
 * - Loop and GC: the server's event-loop delay (p99 / worst) and garbage-collection pauses (ms per second, longest)
 *   over each 1 Hz phase, which land directly on ack latency: they tell a tail caused by pauses from one caused by work.
 *   The client process's own CPU, loop delay and GC pauses are shown beside them: a stall there delays reading acks
 *   for both targets. "p99 less client GC" takes from each latency the part of its wait the clients spent in their
 *   own GC pauses (the measured p99 stays the goal's figure). The clients send with an ack callback and one 1 ms
 *   interval (no timer or promise per fix).
 * - Memory per connection: the server's RSS and V8 heap+external, each the median of 5 readings right after a forced
 *   full GC (200 ms apart), connected minus before, ÷ N.
 * - The server runs with the young generation `npm start` gives it (`--max-semi-space-size=64` on this script's node);
 *   the echo server shares its process, so the baseline has it too, and so does the clients' process.
 * - Capacity: closed loop, every socket of the first size listed (1,000 by default) keeps one fix in flight for 5 s;
 *   acks/s full ÷ echo.
 *   The per-driver quota is raised to 100 events/s here so the capacity run measures work, not refusals (the
 *   limiter still runs on every event).
 *
 * - BENCH_CPU_PROFILE=<prefix> writes V8 CPU profiles of each measured phase (`<prefix>-full-1000.cpuprofile`, ...);
 *   BENCH_HEAP_SNAPSHOTS=<prefix> writes two heap snapshots 8 s apart into each 1 Hz phase (`<prefix>-full-5000-a`,
 *   `-b`; see bench/support/heap-snapshots.ts; give it BENCH_REALTIME_SECONDS=20 or more, and read no figure of that
 *   run: each snapshot stops the server for seconds);
 *   BENCH_REALTIME_SECONDS shortens the 1 Hz phase (the capacity loop runs half as long).
 *
 * Run: `npm run bench:realtime` = `node --expose-gc --max-semi-space-size=64 --import tsx bench/realtime.ts` (about 3 minutes). Progress on
 * stderr, table on stdout, JSON in bench/results/realtime.json.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Server } from 'socket.io';
import { createApplication } from '../engine/admin/application.service.ts';
import { startServer } from '../app/server.ts';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import { createBenchDatabase } from './support/bench-database.ts';
import { prepareRun, startBenchServices } from './support/bench-services.ts';
import { inParallel } from './support/command-load.ts';
import { seedEngineSite } from './support/engine-seed.ts';
import { machineLine } from './support/environment.ts';
import { formatGrid, whole } from './support/grid.ts';
import type { ClientReply, ClientRequest, StreamReply } from './support/realtime-clients.ts';
import { profiled } from './support/cpu-profile.ts';
import { snapshotPair } from './support/heap-snapshots.ts';
import { watchLoop, type LoopFigures } from './support/loop-monitor.ts';
import { postgresCpu } from './support/postgres-cpu.ts';
import { writeResults } from './support/report.ts';

/** `BENCH_REALTIME_SIZES=5000` runs one size (the first size listed also runs the capacity loop). */
const SIZES = (process.env.BENCH_REALTIME_SIZES ?? '1000,5000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_REALTIME_SECONDS ?? 10);
/** Seconds of 1 Hz streaming before each measured phase (BENCH_REALTIME_WARMUP). */
const WARMUP_SECONDS = Number(process.env.BENCH_REALTIME_WARMUP ?? 2);
const CAPACITY_SECONDS = Math.max(1, Math.round(SECONDS / 2));
const GOALS = { p99Ms: 25, kbPerConnection: 40, capacityRatio: 0.5 };
const SUBDOMAIN = 'fleet';
const RESULTS_FILE = fileURLToPath(new URL('./results/realtime.json', import.meta.url));

const progress = (line: string) => process.stderr.write(`[bench:realtime] ${line}\n`);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fixed = (n: number, digits = 1) => n.toFixed(digits);
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');

type Target = { name: string; port: number; profileAs: string; database: { micros(): Promise<number> } | null };
type Row = { target: string; drivers: number; stream: StreamReply; cpuPercent: number; cpuMicrosPerAck: number; dbMicrosPerAck: number | null; rssKbPerConnection: number; heapKbPerConnection: number; connectSeconds: number; loop: LoopFigures };
type Capacity = { target: string; stream: StreamReply; acksPerSecond: number; cpuPercent: number; cpuMicrosPerAck: number; dbMicrosPerAck: number | null };

/**
 * The clients' process gets the young generation the server runs with (`npm start`, `bench:realtime`): its own
 * pauses delay the reading of acks for both targets alike, and with V8's default (16 MB semi-spaces) it promoted
 * and collected what 5,000 sockets keep for a second each as often as the server did.
 */
const CLIENT_NODE_FLAGS = ['--max-semi-space-size=64', '--import', 'tsx'];

/** The clients' process: one request, one reply. */
class Clients {
  constructor(private readonly child: ChildProcess) {}

  static start(): Clients {
    return new Clients(fork(fileURLToPath(new URL('./support/realtime-clients.ts', import.meta.url)), [], { execArgv: CLIENT_NODE_FLAGS, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  ask(request: ClientRequest): Promise<Extract<ClientReply, { ok: true }>> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the clients' process exited (code ${code})`));
      this.child.once('exit', onExit);
      this.child.once('message', (reply: ClientReply) => {
        this.child.off('exit', onExit);
        if (reply.ok) resolve(reply);
        else reject(new Error(`clients failed: ${reply.error}`));
      });
      this.child.send(request);
    });
  }

  stop(): void {
    this.child.disconnect();
  }
}

/** The baseline: socket.io with a `/driver` namespace that acknowledges every `location` at once. */
async function startEchoServer(): Promise<{ port: number; close(): Promise<void> }> {
  const http: HttpServer = createServer();
  const io = new Server(http, { serveClient: false });
  io.of('/driver').on('connection', (socket) => socket.on('location', (_fix: unknown, ack: unknown) => typeof ack === 'function' && ack({ data: { accepted: true } })));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { port: (http.address() as AddressInfo).port, close: () => io.close() };
}

const median = (values: number[]): number => values.toSorted((a, b) => a - b)[values.length >> 1]!;

/** Samples per memory reading (odd: the median is one of them) and the pause between them. */
const MEMORY_SAMPLES = 5;
const MEMORY_SAMPLE_GAP_MS = 200;

/**
 * The server process's resident size and V8 heap (used + external), each the median of MEMORY_SAMPLES readings taken
 * right after a forced full GC, MEMORY_SAMPLE_GAP_MS apart. One reading after one GC moved with what the allocator
 * happened to keep or return at that moment (RSS per connection came out negative at 1k); the median of several is
 * the process's settled size. It is the server's whole footprint (the clients run in their own process).
 */
async function settledMemory(): Promise<{ rss: number; heap: number }> {
  const rss: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < MEMORY_SAMPLES; i += 1) {
    if (i > 0) await pause(MEMORY_SAMPLE_GAP_MS);
    globalThis.gc?.();
    const usage = process.memoryUsage();
    rss.push(usage.rss);
    heap.push(usage.heapUsed + usage.external);
  }
  return { rss: median(rss), heap: median(heap) };
}

/** The server's CPU time over `work`, and the database's (its backends serving the bench database) when given. */
async function cpuOver<T>(database: Target['database'], work: () => Promise<T>): Promise<{ result: T; cpuMicros: number; dbMicros: number | null; seconds: number; loop: LoopFigures }> {
  const dbBefore = await database?.micros();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const watch = watchLoop();
  const result = await work();
  const loop = watch.stop();
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - started) / 1000;
  const dbAfter = await database?.micros();
  return { result, cpuMicros: used.user + used.system, dbMicros: dbBefore === undefined || dbAfter === undefined ? null : dbAfter - dbBefore, seconds, loop };
}

const perAck = (micros: number | null, acked: number): number | null => (micros === null ? null : micros / Math.max(1, acked));

async function measureTarget(target: Target, tokens: string[], clients: Clients): Promise<{ rows: Row[]; capacity: Capacity | null }> {
  const rows: Row[] = [];
  let capacity: Capacity | null = null;
  for (const drivers of SIZES) {
    const before = await settledMemory();
    progress(`${target.name}: connecting ${drivers} drivers`);
    const connected = await clients.ask({ type: 'connect', port: target.port, host: `${SUBDOMAIN}.localhost:${target.port}`, tokens: tokens.slice(0, drivers) });
    await pause(1000);
    const after = await settledMemory();
    // Warm-up, discarded as the HTTP and engine benches discard theirs: in its first second every driver's first fix
    // creates the driver's rows (5,000 inserts at once); the measured phase is the steady state of 1 Hz streams.
    const warm = await clients.ask({ type: 'stream', seconds: WARMUP_SECONDS, hz: 1 });
    progress(`${target.name}: ${drivers} drivers, ${WARMUP_SECONDS} s warm-up (discarded): p50 ${fixed(warm.stream!.latencyMs.p50, 2)} ms, p99 ${fixed(warm.stream!.latencyMs.p99, 2)} ms`);
    progress(`${target.name}: ${drivers} drivers at 1 Hz for ${SECONDS} s`);
    const label = `${target.profileAs}-${drivers}`;
    const snapshots = process.env.BENCH_HEAP_SNAPSHOTS ? snapshotPair(`${process.env.BENCH_HEAP_SNAPSHOTS}-${label}`, 2000, 8000, progress) : null;
    const { result, cpuMicros, dbMicros, seconds, loop } = await cpuOver(target.database, () => profiled(label, () => clients.ask({ type: 'stream', seconds: SECONDS, hz: 1 }), progress));
    await snapshots;
    const stream = result.stream!;
    rows.push({
      target: target.name,
      drivers,
      stream,
      cpuPercent: (cpuMicros / 1e6 / seconds) * 100,
      cpuMicrosPerAck: cpuMicros / Math.max(1, stream.acked),
      dbMicrosPerAck: perAck(dbMicros, stream.acked),
      rssKbPerConnection: (after.rss - before.rss) / 1024 / drivers,
      heapKbPerConnection: (after.heap - before.heap) / 1024 / drivers,
      connectSeconds: (connected.ms ?? 0) / 1000,
      loop,
    });
    if (drivers === SIZES[0]) {
      progress(`${target.name}: capacity, ${drivers} sockets in a closed loop for ${CAPACITY_SECONDS} s`);
      const saturated = await cpuOver(target.database, () => profiled(`${target.profileAs}-capacity`, () => clients.ask({ type: 'saturate', seconds: CAPACITY_SECONDS }), progress));
      const s = saturated.result.stream!;
      capacity = {
        target: target.name, stream: s, acksPerSecond: s.acked / s.seconds, cpuPercent: (saturated.cpuMicros / 1e6 / saturated.seconds) * 100,
        cpuMicrosPerAck: saturated.cpuMicros / Math.max(1, s.acked), dbMicrosPerAck: perAck(saturated.dbMicros, s.acked),
      };
    }
    await clients.ask({ type: 'disconnect' });
    await pause(2000);
  }
  return { rows, capacity };
}

function report(rows: Row[], capacities: Capacity[], machine: string): string {
  const table = formatGrid(
    ['target', 'drivers', 'acked/s', 'p50 ms', 'p99 ms', 'p99 less client GC', 'refused+lost', 'server CPU', 'CPU µs/ack', 'PG µs/ack', 'loop p99/max ms', 'GC ms/s (max)', 'client CPU, loop p99/max ms, GC ms/s (max)', 'RSS KB/conn', 'heap KB/conn'],
    rows.map((r) => [
      r.target, whole(r.drivers), whole(r.stream.acked / r.stream.seconds), fixed(r.stream.latencyMs.p50, 2), fixed(r.stream.latencyMs.p99, 2), fixed(r.stream.latencyLessClientGcMs.p99, 2),
      whole(r.stream.refused + r.stream.lost), `${fixed(r.cpuPercent)}%`, whole(r.cpuMicrosPerAck), r.dbMicrosPerAck === null ? '' : whole(r.dbMicrosPerAck),
      `${fixed(r.loop.loopP99Ms)} / ${fixed(r.loop.loopMaxMs)}`, `${fixed(r.loop.gcMs / r.stream.seconds)} (${fixed(r.loop.gcMaxMs)})`,
      `${fixed(r.stream.clientCpuPercent)}%, ${fixed(r.stream.clientLoop.loopP99Ms)} / ${fixed(r.stream.clientLoop.loopMaxMs)}, ${fixed(r.stream.clientLoop.gcMs / r.stream.seconds)} (${fixed(r.stream.clientLoop.gcMaxMs)})`,
      fixed(r.rssKbPerConnection), fixed(r.heapKbPerConnection),
    ]),
  );
  const echo = capacities.find((c) => c.target === 'bare socket.io echo');
  const full = capacities.find((c) => c.target === 'full location path');
  const ratio = echo && full ? full.acksPerSecond / echo.acksPerSecond : Number.NaN;
  const capacityTable = formatGrid(
    [`capacity (${whole(SIZES[0]!)} sockets, closed loop)`, 'acked/s', 'p50 ms', 'p99 ms', 'server CPU', 'CPU µs/ack', 'PG µs/ack'],
    capacities.map((c) => [
      c.target, whole(c.acksPerSecond), fixed(c.stream.latencyMs.p50, 2), fixed(c.stream.latencyMs.p99, 2), `${fixed(c.cpuPercent)}%`,
      whole(c.cpuMicrosPerAck), c.dbMicrosPerAck === null ? '' : whole(c.dbMicrosPerAck),
    ]),
  );
  const big = rows.findLast((r) => r.target === 'full location path');
  if (!big) return [table, '', capacityTable, '', machine].join('\n');
  const goals = [
    `${whole(big.drivers)} drivers at 1 Hz, p99 ack ${fixed(big.stream.latencyMs.p99, 2)} ms (goal < ${GOALS.p99Ms}): ${verdict(big.stream.latencyMs.p99 < GOALS.p99Ms && big.stream.lost === 0)} (${fixed(big.stream.latencyLessClientGcMs.p99, 2)} ms less the clients' own GC pauses)`,
    `memory per connection ${fixed(big.rssKbPerConnection)} KB RSS, ${fixed(big.heapKbPerConnection)} KB heap (goal ≤ ${GOALS.kbPerConnection}): ${verdict(Math.max(big.rssKbPerConnection, big.heapKbPerConnection) <= GOALS.kbPerConnection)}`,
    `capacity full ÷ echo ${fixed(ratio, 2)}× (goal ≥ ${GOALS.capacityRatio}×): ${verdict(ratio >= GOALS.capacityRatio)}`,
  ];
  return [table, '', capacityTable, '', ...goals, '', machine].join('\n');
}

async function main(): Promise<void> {
  const { cleanups, cleanup, loadBefore } = prepareRun(progress);
  try {
    const benchDatabase = await createBenchDatabase();
    cleanups.push({ name: 'drop database', run: benchDatabase.drop });
    const services = await startBenchServices(benchDatabase, 'realtime', {
      PORT: '0', BIND_ADDRESS: '127.0.0.1', BASE_DOMAIN: 'localhost', LOCATION_RATE_LIMIT_PER_SECOND: '100', RATE_LIMIT_POINTS: '1000000',
    }, cleanups);
    await services.db.migrate();
    const site = await seedEngineSite(services.db.orm, SUBDOMAIN);
    progress(`creating ${SIZES.at(-1)} driver API keys`);
    const tokens: string[] = [];
    const actor = { userId: null, applicationId: null, requestId: 'bench-realtime-seed' };
    // Small transactions: the ORM's unit of work re-checks every managed entity on each flush.
    await inParallel(SIZES.at(-1)! / 50, 4, async () => {
      const batch = await inTenantScope(services.db.orm, { siteId: site.siteId }, async (em) => {
        const keys: string[] = [];
        for (let i = 0; i < 50; i += 1) keys.push((await createApplication(em, actor, site.siteId, { name: 'driver app', role: 'driver' })).apiKey);
        return keys;
      });
      tokens.push(...batch);
    });
    const running = await startServer(services);
    cleanups.push({ name: 'stop server', run: () => running.close() });
    const echo = await startEchoServer();
    cleanups.push({ name: 'stop echo server', run: () => echo.close() });
    const clients = Clients.start();
    cleanups.push({ name: 'stop clients', run: async () => clients.stop() });

    const database = await postgresCpu(benchDatabase.url, benchDatabase.name);
    cleanups.push({ name: 'close the CPU probe', run: () => database.close() });
    const echoRun = process.env.BENCH_REALTIME_SKIP_ECHO ? { rows: [], capacity: null } : await measureTarget({ name: 'bare socket.io echo', port: echo.port, profileAs: 'echo', database: null }, tokens, clients);
    const fullRun = await measureTarget({ name: 'full location path', port: running.port, profileAs: 'full', database }, tokens, clients);
    const rows = [...echoRun.rows, ...fullRun.rows];
    const capacities = [echoRun.capacity, fullRun.capacity].filter((c): c is Capacity => c !== null);
    // The young generation's size is a node flag: a run without the script's flags measures another server.
    const machine = `${machineLine(loadBefore)}\nserver process node flags: ${process.execArgv.filter((flag) => flag.startsWith('--') && flag !== '--import').join(' ')}`;
    process.stdout.write(`${report(rows, capacities, machine)}\n`);
    writeResults(RESULTS_FILE, { rows, capacities, goals: GOALS, machine });
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
