/**
 * Dispatch benchmark (issue 4): decision latency of team-by-ETA and load-balanced dispatch with 1k and 10k drivers,
 * end to end through the command path (driver facts read, eligibility, mapping matrix, ranking, route join, the
 * job's `dispatch` transition with its stop cascade, the dispatch record with its explanation, audit + outbox, one
 * transaction), beside a brute-force scoring loop over the same drivers held in memory, in the same run; and pool
 * claim throughput (distinct drivers claiming distinct offers, 16 at a time), and the pool listing a driver's app polls.
 * Goals: p99 < 5 ms at 1k drivers, < 50 ms at 10k.
 *
 * Setup: fresh PostgreSQL database (migrated here, dropped at the end) as a non-superuser role, so row-level security
 * applies as in production. Drivers are seeded with SQL (users, driver profiles, workers in one team with a default
 * vehicle, available driver actors with positions scattered over ~20 km around Paris). Jobs are created through the
 * command path before each timed series (not timed), one stop each at a random point. Decisions run one at a time.
 *
 * Run: `npm run bench:dispatch`, i.e. Node with `--max-semi-space-size=64` as `npm start` runs the server (a few minutes). Progress on stderr, table on stdout, JSON in bench/results/dispatch.json.
 * `BENCH_DISPATCH_SIZES=1000` runs one size, `BENCH_DISPATCH_SAMPLES=100` takes another number of decisions per series
 * (500 at 1k, 200 at 10k by default), `BENCH_CPU_PROFILE=<prefix>` writes a V8 CPU profile of each timed series to
 * `<prefix>-<size>-<strategy>.cpuprofile`, and `BENCH_PERF=<prefix>` records each timed series with Linux `perf`
 * (`<prefix>-<size>-<strategy>.data`: every thread of the process, kernel included, at a fraction of the V8 profiler's
 * overhead; run Node with `--perf-basic-prof` to name JavaScript functions). `BENCH_DISPATCH_HISTORY=2000` dispatches that
 * many jobs to a team of their own first and analyzes the tables, so the series runs on a site with a history and
 * plans made on its real sizes (bench/support/dispatch-history.ts). `BENCH_DISPATCH_TRACE=<prefix>` writes each timed
 * dispatch's main-thread CPU and run-queue wait, the other threads' CPU and the GCs to `<prefix>-<size>-<strategy>.json`
 * (bench/support/dispatch-trace.ts; with `BENCH_PERF` the perf samples map onto them). Like `npm start`, the bench
 * first lowers V8's helper threads to nice 19 (app/helper-thread-priority.ts); `BENCH_HELPER_PRIORITY=default` does not.
 * "PostgreSQL CPU per dispatch" is the CPU of the bench database's backends over the timed series (the command's
 * connections and the outbox relay's) divided by its dispatches (bench/support/postgres-cpu.ts).
 */
import { fileURLToPath } from 'node:url';
import type { MikroORM } from '@mikro-orm/postgresql';
import { decide } from '../engine/dispatch/decide.ts';
import { dispatchDeps } from '../engine/dispatch/dispatch-deps.ts';
import { loadDriverFacts } from '../engine/dispatch/driver-facts.ts';
import { createMappingProvider } from '../engine/mapping/create-mapping-provider.ts';
import { legsTo } from '../engine/dispatch/evaluate.ts';
import { loadJobTarget } from '../engine/dispatch/job-target.ts';
import { claimFromPool, listPool, postToPool } from '../engine/dispatch/pool.ts';
import { tenantRead } from '../engine/runtime/tenant-read.ts';
import { workflowsOutsideTransaction } from '../engine/workflow/workflow.service.ts';
import { dispatchByStrategy } from '../engine/dispatch/strategy-dispatch.ts';
import type { Strategy } from '../engine/dispatch/dispatch-types.ts';
import type { CommandContext, Engine } from '../engine/engine.ts';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import { lowerHelperThreadPriority } from '../app/helper-thread-priority.ts';
import { startBenchServices, prepareRun } from './support/bench-services.ts';
import { createBenchDatabase } from './support/bench-database.ts';
import { dispatcherContext, seedEngineSite, type EngineSite } from './support/engine-seed.ts';
import { makeJobs, PARIS, seedDrivers } from './support/dispatch-fleet.ts';
import { seedDispatchHistory } from './support/dispatch-history.ts';
import { gitCommit, machineLine } from './support/environment.ts';
import { percentiles, type Percentiles } from './support/open-loop.ts';
import { profiled } from './support/cpu-profile.ts';
import { countGc, type GcFigures, type Window } from './support/gc-count.ts';
import { startHeapProfile } from './support/heap-profile.ts';
import { startPerfRecord } from './support/perf-record.ts';
import { startDispatchTrace } from './support/dispatch-trace.ts';
import { countQueries, type QueryCount } from './support/query-counter.ts';
import { postgresCpu } from './support/postgres-cpu.ts';
import { writeResults } from './support/report.ts';

/** `BENCH_DISPATCH_SIZES=1000` runs one size; `BENCH_DISPATCH_SAMPLES=100` takes another number of decisions per series. */
const SIZES = process.env.BENCH_DISPATCH_SIZES ? process.env.BENCH_DISPATCH_SIZES.split(',').map(Number) : [1000, 10_000];
/**
 * Decisions per timed series. A p99 needs enough samples to mean something: with 100 it was the second-worst
 * dispatch at 1k (and with 40 the worst at 10k), i.e. one stall decided it. 500 make it the fifth-worst (about 3 s of
 * dispatches at 1k), 200 the second-worst at 10k; the first 100 (40) of them are the series the bench used to take,
 * and their p99 (`old series p99`) is reported beside it for comparison.
 */
const SAMPLES: Record<number, number> = { 1000: 500, 10_000: 200 };
/** The series lengths this bench took before (their p99 is reported from the start of each series too). */
const OLD_SAMPLES: Record<number, number> = { 1000: 100, 10_000: 40 };
/** `BENCH_DISPATCH_HISTORY=2000`: that many jobs dispatched on the site before the series (see `seedDispatchHistory`); none by default. */
const HISTORY = Number(process.env.BENCH_DISPATCH_HISTORY ?? 0);
const SAMPLE_OVERRIDE = process.env.BENCH_DISPATCH_SAMPLES ? Number(process.env.BENCH_DISPATCH_SAMPLES) : null;
/**
 * Dispatches whose statements are counted. Enough that the ones that read their driver's route for the day first (no
 * route remembered for that driver yet) weigh as they do in a series: with 5, one such dispatch moved the figure by 0.6.
 */
const COUNTED = 50;
const WARMUP = 10;
const CLAIMS = 200;
const CLAIM_CONCURRENCY = 16;
/** Listings of the pool (its first page: 100 of the CLAIMS open offers) by one driver, one at a time, before the claims. */
const LISTINGS = 50;

type PoolFigures = { perSecond: number; latency: Percentiles; listing: Percentiles; listingCpu: Percentiles };
const GOALS_P99_MS: Record<number, number> = { 1000: 5, 10_000: 50 };
const RESULTS_FILE = fileURLToPath(new URL('./results/dispatch.json', import.meta.url));

const progress = (line: string) => process.stderr.write(`[bench:dispatch] ${line}\n`);
const ms = (n: number) => n.toFixed(2);

/** `engineCpu`: this process's CPU time (user + system) per dispatch: what the decision and the command cost in Node, without the wait for a CPU on a loaded machine (PostgreSQL's own time is not in it). */
/** `gc`: the timed series' collections (after its warm-up); `allocatedKb`: KB allocated per dispatch (with `BENCH_HEAP_PROFILE` only). */
/** `postgresCpuMs`: the bench database's backends' CPU per timed dispatch (the command's and the outbox relay's; see postgresCpu). */
type Row = { drivers: number; strategy: string; engine: Percentiles; oldSeries: Percentiles; engineCpu: Percentiles; postgresCpuMs: number; bruteForce: Percentiles; decideOnly: Percentiles; goalMs: number; gc: GcFigures; allocatedKb: number | null };

async function main(): Promise<void> {
  // As `npm start` does first (main.ts); `BENCH_HELPER_PRIORITY=default` leaves V8's helper threads at the default priority, for comparison.
  if (process.env.BENCH_HELPER_PRIORITY !== 'default') progress(`${lowerHelperThreadPriority()} helper threads at the lowest CPU priority`);
  const { cleanups, cleanup, loadBefore } = prepareRun(progress);
  try {
    const database = await createBenchDatabase();
    cleanups.push({ name: 'drop database', run: database.drop });
    const services = await startBenchServices(database, 'dispatch', {}, cleanups);
    const postgres = await postgresCpu(database.url, database.name);
    cleanups.push({ name: 'close the PostgreSQL CPU reader', run: postgres.close });
    await services.db.migrate();
    const deps = dispatchDeps(services);
    const rows: Row[] = [];
    let claims: PoolFigures | null = null;
    let statements: QueryCount | null = null;
    for (const size of SIZES) {
      const site = await seedEngineSite(services.db.orm, `dispatch${size}`);
      const teamId = await seedDrivers(services.db.orm, site, size);
      progress(`${size} drivers seeded`);
      if (HISTORY > 0) {
        await seedDispatchHistory(services.db.orm, services.engine, deps, dispatcherContext(site), site, HISTORY);
        progress(`${HISTORY} jobs dispatched to a team of their own before the series (BENCH_DISPATCH_HISTORY)`);
      }
      const ctx = dispatcherContext(site);
      for (const strategy of ['eta', 'load-balanced'] as Strategy[]) {
        const count = (SAMPLE_OVERRIDE ?? SAMPLES[size]!) + WARMUP;
        const jobs = await makeJobs(services.engine, ctx, site, count);
        const engine: number[] = [];
        const engineCpu: number[] = [];
        const decideOnly: number[] = [];
        const brute: number[] = [];
        // The baselines first, in a pass of their own over the same jobs (read only: nothing is written), so the
        // timed series runs back to back with only its own garbage and its own outbox relay passes in the heap;
        // interleaved, their allocations (about 60% more per iteration) set off young-generation pauses inside it.
        // So each baseline read sees the fleet before any dispatch of the series (interleaved, job i+1 saw i of them).
        for (const [i, jobId] of jobs.entries()) {
          const decided = await timeDecisionOnly(services.db.orm, site.siteId, jobId, strategy, teamId, deps);
          const bruteMs = await timeBruteForce(services.db.orm, site.siteId, teamId, strategy);
          if (i >= WARMUP) {
            decideOnly.push(decided);
            brute.push(bruteMs);
          }
        }
        // The timed series' own collections and allocations, from the end of its warm-up.
        const watch: { gc?: ReturnType<typeof countGc>; heap?: Awaited<ReturnType<typeof startHeapProfile>> } = {};
        const windows: Window[] = [];
        let postgresMicrosBefore = 0;
        progress(`${size} ${strategy}: timed series of ${count} dispatches (the first ${WARMUP} a warm-up)`);
        const perf = await startPerfRecord(process.env.BENCH_PERF && `${process.env.BENCH_PERF}-${size}-${strategy}.data`);
        const trace = startDispatchTrace(process.env.BENCH_DISPATCH_TRACE && `${process.env.BENCH_DISPATCH_TRACE}-${size}-${strategy}.json`);
        await profiled(`${size}-${strategy}`, async () => {
          for (const [i, jobId] of jobs.entries()) {
            if (i === WARMUP) {
              watch.gc = countGc();
              watch.heap = await startHeapProfile(process.env.BENCH_HEAP_PROFILE && `${process.env.BENCH_HEAP_PROFILE}-${size}-${strategy}.heapprofile`);
              postgresMicrosBefore = await postgres.micros();
            }
            const cpu = process.cpuUsage();
            const started = performance.now();
            await trace.around(i, () =>
              services.engine.command(ctx, `job:${jobId}`, (scope) =>
                dispatchByStrategy(deps, scope, { jobId, strategy, method: 'team', teamId, requireConfirmation: false }),
              ),
            );
            const elapsed = performance.now() - started;
            const cpuUsed = process.cpuUsage(cpu);
            if (i >= WARMUP) {
              engine.push(elapsed);
              engineCpu.push((cpuUsed.user + cpuUsed.system) / 1000);
              windows.push({ start: started, end: started + elapsed });
            }
          }
        }, progress);
        const postgresCpuMs = (await postgres.micros() - postgresMicrosBefore) / 1000 / engine.length;
        await perf.stop();
        await trace.stop();
        const allocated = await watch.heap!.stop();
        const gcFigures = await watch.gc!.stop(windows);
        rows.push({ drivers: size, strategy, engine: percentiles(engine), oldSeries: percentiles(engine.slice(0, OLD_SAMPLES[size] ?? engine.length)), engineCpu: percentiles(engineCpu), postgresCpuMs, bruteForce: percentiles(brute), decideOnly: percentiles(decideOnly), goalMs: GOALS_P99_MS[size]!, gc: gcFigures, allocatedKb: allocated === null ? null : allocated / 1024 / engine.length });
        progress(`${size} ${strategy}: p50 ${ms(percentiles(engine).p50)} ms, p99 ${ms(percentiles(engine).p99)} ms, ${(gcFigures.scavenges * 100 / engine.length).toFixed(1)} scavenges per 100, ${(gcFigures.scavengesInside * 100 / engine.length).toFixed(1)} inside dispatches (longest ${ms(gcFigures.scavengeMaxMs)} ms)${allocated === null ? '' : `, ${(allocated / 1024 / engine.length).toFixed(0)} KB allocated per dispatch`}`);
      }
      if (size === SIZES[0]) {
        claims = await claimThroughput(services.db.orm, services.engine, ctx, site);
        // Diagnostic, outside the timings: the statements one team-by-ETA dispatch sends.
        const jobs = await makeJobs(services.engine, ctx, site, COUNTED);
        statements = await countQueries(COUNTED, async (i) => {
          await services.engine.command(ctx, `job:${jobs[i]}`, (scope) =>
            dispatchByStrategy(deps, scope, { jobId: jobs[i]!, strategy: 'eta', method: 'team', teamId, requireConfirmation: false }),
          );
        });
      }
    }
    const report = formatReport(rows, claims!, statements);
    process.stdout.write(`${report}\n`);
    writeResults(RESULTS_FILE, { commit: gitCommit(), machine: machineLine(loadBefore), history: HISTORY, rows, claims, statements });
    process.stdout.write(`${machineLine(loadBefore)}\n`);
  } finally {
    await cleanup();
  }
}

/** The decision alone (read + rank), in a read-only transaction: no route, transition or record. */
async function timeDecisionOnly(orm: MikroORM, siteId: string, jobId: string, strategy: Strategy, teamId: string, deps: ReturnType<typeof dispatchDeps>): Promise<number> {
  return inTenantScope(orm, { siteId }, async (em) => {
    const job = await loadJobTarget(em, siteId, jobId);
    const started = performance.now();
    await decide(em, siteId, { job, strategy, teamId, now: new Date(), mapping: deps.mappingFor(siteId), requireVehicle: true });
    return performance.now() - started;
  });
}

/**
 * The baseline: the same drivers already in memory (read once, outside the timing), scored by a plain loop
 * (haversine × detour through the same provider, then a full sort). What a decision costs with no database at all.
 */
const memory = new Map<string, Awaited<ReturnType<typeof loadDriverFacts>>>();
const mapping = createMappingProvider(null);
async function timeBruteForce(orm: MikroORM, siteId: string, teamId: string, strategy: Strategy): Promise<number> {
  let drivers = memory.get(siteId);
  if (!drivers) {
    drivers = await inTenantScope(orm, { siteId }, (em) => loadDriverFacts(em, siteId, { teamId }));
    memory.set(siteId, drivers);
  }
  const target = { lat: PARIS.lat + (Math.random() - 0.5) * 0.3, lng: PARIS.lng + (Math.random() - 0.5) * 0.45 };
  const started = performance.now();
  const legs = await legsTo(mapping, drivers, target);
  const scored = drivers.map((d, i) => ({ id: d.userId, load: d.load, seconds: legs[i]?.seconds ?? Number.POSITIVE_INFINITY }));
  scored.sort(strategy === 'eta' ? (a, b) => a.seconds - b.seconds || a.load - b.load : (a, b) => a.load - b.load || a.seconds - b.seconds);
  return performance.now() - started;
}

/**
 * CLAIMS offers posted, listed LISTINGS times by one driver (wall and Node CPU per listing of the first page), then
 * claimed by CLAIMS distinct drivers, CLAIM_CONCURRENCY at a time.
 */
async function claimThroughput(orm: MikroORM, engine: Engine, ctx: CommandContext, site: EngineSite): Promise<PoolFigures> {
  const jobs = await makeJobs(engine, ctx, site, CLAIMS);
  const offers: string[] = [];
  for (const jobId of jobs) offers.push((await engine.command(ctx, `job:${jobId}`, (scope) => postToPool(scope, jobId, null, new Date(Date.now() - 1000)))).id);
  const drivers = await inTenantScope(orm, { siteId: site.siteId }, (em) =>
    em.execute<{ user_id: string }[]>('select user_id from worker where site_id = ? order by user_id limit ?', [site.siteId, CLAIMS]),
  );
  const listing = await timeListings(orm, site.siteId, drivers[0]!.user_id);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLAIM_CONCURRENCY }, async () => {
      while (next < offers.length) {
        const i = next++;
        const driverCtx: CommandContext = { siteId: site.siteId, actor: { userId: drivers[i]!.user_id, applicationId: null, requestId: null, role: 'driver' } };
        const t = performance.now();
        await engine.command(driverCtx, `dispatch:${offers[i]}`, (scope) => claimFromPool(scope, offers[i]!));
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  progress(`claims: ${(offers.length / seconds).toFixed(0)}/s`);
  return { perSecond: offers.length / seconds, latency: percentiles(latencies), ...listing };
}

/** The pool's first page as a driver's app reads it (GET /dispatch/pool's read), LISTINGS times after 5 of warm-up. */
async function timeListings(orm: MikroORM, siteId: string, driverId: string): Promise<Pick<PoolFigures, 'listing' | 'listingCpu'>> {
  const actor = { userId: driverId, applicationId: null, requestId: null, role: 'driver' as const };
  const list = () => listPool(tenantRead(orm, { siteId, userId: driverId }), workflowsOutsideTransaction(orm, siteId), siteId, actor, new Date(), { limit: 100, offset: 0, direction: 'asc' });
  for (let i = 0; i < 5; i++) await list();
  const wall: number[] = [];
  const cpu: number[] = [];
  let listed = 0;
  for (let i = 0; i < LISTINGS; i++) {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    listed = (await list())[0].length;
    wall.push(performance.now() - started);
    const used = process.cpuUsage(cpuBefore);
    cpu.push((used.user + used.system) / 1000);
  }
  progress(`pool listing: ${listed} offers, p50 ${ms(percentiles(wall).p50)} ms`);
  return { listing: percentiles(wall), listingCpu: percentiles(cpu) };
}

function formatReport(rows: Row[], claims: PoolFigures, statements: QueryCount | null): string {
  const lines = [
    '| drivers | strategy | samples | engine p50 ms | engine p99 ms | old series p99 ms (first 100 at 1k, 40 at 10k) | engine CPU p50 / p99 ms | PostgreSQL CPU per dispatch ms | scavenges per 100 (inside dispatches; longest ms) | KB allocated per dispatch | decision only p99 ms | brute-force p50 ms | brute-force p99 ms | goal p99 | verdict |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map((r) =>
      `| ${r.drivers} | ${r.strategy} | ${r.engine.count} | ${ms(r.engine.p50)} | ${ms(r.engine.p99)} | ${ms(r.oldSeries.p99)} | ${ms(r.engineCpu.p50)} / ${ms(r.engineCpu.p99)} | ${ms(r.postgresCpuMs)} | ${((r.gc.scavenges * 100) / r.engine.count).toFixed(1)} (${((r.gc.scavengesInside * 100) / r.engine.count).toFixed(1)}; ${ms(r.gc.scavengeMaxMs)}) | ${r.allocatedKb === null ? '–' : r.allocatedKb.toFixed(0)} | ${ms(r.decideOnly.p99)} | ${ms(r.bruteForce.p50)} | ${ms(r.bruteForce.p99)} | < ${r.goalMs} ms | ${r.engine.p99 < r.goalMs ? 'met' : 'NOT met'} |`,
    ),
    '',
    `Pool claims (${CLAIMS} offers, ${CLAIM_CONCURRENCY} claimers at a time): ${claims.perSecond.toFixed(0)} claims/s, latency p50 ${ms(claims.latency.p50)} ms, p99 ${ms(claims.latency.p99)} ms`,
    `Pool listing (its first page, 100 of ${CLAIMS} open offers, each job with its stops; one driver, ${LISTINGS} listings one at a time): p50 ${ms(claims.listing.p50)} ms, p99 ${ms(claims.listing.p99)} ms; Node CPU p50 ${ms(claims.listingCpu.p50)} ms`,
  ];
  if (statements) {
    lines.push('', `Statements per team-by-ETA dispatch: ${statements.perOperation.total.toFixed(1)} (command transaction ${statements.perOperation.command.toFixed(1)})`);
    for (const entry of statements.statements) lines.push(`  ${entry.owner}: ${entry.perOperation} × ${entry.statement} (${entry.bytes} bytes)`);
  }
  return lines.join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
