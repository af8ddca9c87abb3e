/**
 * Where a 1k team dispatch's wall time goes (issue 4, a diagnostic beside bench/dispatch.ts): the same fleet and
 * command, 300 back-to-back team-by-ETA dispatches (after 20 of warm-up), each recorded as a timeline of round
 * trips (send → reply, the serving backend's CPU and run-queue wait from /proc/<pid>/schedstat) and the Node main
 * thread's CPU and run-queue wait. Prints medians per round trip kind, and what the slowest dispatches spent.
 *
 * Run: `node --max-semi-space-size=64 --import tsx bench/dispatch-timeline.ts` (`BENCH_TIMELINE_DRIVERS`,
 * `BENCH_TIMELINE_SAMPLES`, `BENCH_TIMELINE_STRATEGY=load-balanced` change the fleet, the series, the strategy;
 * V8's helper threads are lowered as `npm start` lowers them, unless `BENCH_HELPER_PRIORITY=default`;
 * `BENCH_TIMELINE_HISTORY=2000` runs on a site with that many jobs dispatched before, as `BENCH_DISPATCH_HISTORY`;
 * `BENCH_TIMELINE_ANALYZE=before|after` analyzes the tables before or after the warm-up; `BENCH_TIMELINE_SENT=<prefix>`
 * writes the explained dispatches' round trips as sent).
 */
import { writeFileSync } from 'node:fs';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Session } from 'node:inspector/promises';
import { lowerHelperThreadPriority } from '../app/helper-thread-priority.ts';
import { dispatchDeps } from '../engine/dispatch/dispatch-deps.ts';
import type { Strategy } from '../engine/dispatch/dispatch-types.ts';
import { dispatchByStrategy } from '../engine/dispatch/strategy-dispatch.ts';
import { startBenchServices, prepareRun } from './support/bench-services.ts';
import { createBenchDatabase } from './support/bench-database.ts';
import { makeJobs, seedDrivers } from './support/dispatch-fleet.ts';
import { analyzeDispatchTables, seedDispatchHistory } from './support/dispatch-history.ts';
import { dispatcherContext, seedEngineSite } from './support/engine-seed.ts';
import { percentiles } from './support/open-loop.ts';
import { explainRoundTrips, recordTimelines, type RoundTrip, type Timeline } from './support/round-trip-timeline.ts';

const DRIVERS = Number(process.env.BENCH_TIMELINE_DRIVERS ?? 1000);
const SAMPLES = Number(process.env.BENCH_TIMELINE_SAMPLES ?? 300);
const STRATEGY = (process.env.BENCH_TIMELINE_STRATEGY ?? 'eta') as Strategy;
const WARMUP = 20;
/** Dispatches run after the series with their statements explained. */
const EXPLAINED = 2;

const progress = (line: string) => process.stderr.write(`[bench:dispatch-timeline] ${line}\n`);
const f = (n: number) => n.toFixed(2);

/** A round trip's kind: its first statement after the session settings (`execute dispatch_site_head_job_v5`, `commit`, ...). */
function kind(trip: RoundTrip): string {
  const parts = trip.statement.split(/;\s*/).map((p) => p.trim()).filter((p) => p && !p.startsWith('select set_config') && p !== 'begin');
  return (parts[0] ?? trip.statement).replace(/^(execute \w+|select pg_advisory_xact_lock|commit|prepare \w+|\w+ \w+ \S+).*/i, '$1');
}

/** A garbage collection's pause on the main thread (`performance.now()` clock) and its kind as V8 names it. */
type GcPause = { start: number; duration: number; kind: string };

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** The main thread's GC pauses from now until `stop` (which waits a tick: entries arrive asynchronously). */
function recordGcPauses(): { stop(): Promise<GcPause[]> } {
  const pauses: GcPause[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const gcKind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
      pauses.push({ start: entry.startTime, duration: entry.duration, kind: GC_KINDS[gcKind] ?? String(gcKind) });
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      await new Promise((resolve) => setImmediate(resolve));
      observer.disconnect();
      return pauses;
    },
  };
}

/**
 * With `file` set, V8's sampling heap profile of what the series allocated and still holds after a full GC at its
 * end (objects the GCs collected are not counted): what each dispatch leaves behind, which every scavenge copies
 * until it is promoted. Read it with bench/support/heap-profile-sites.ts.
 */
async function startRetainedProfile(file: string | undefined): Promise<{ stop(): Promise<void> }> {
  if (!file) return { stop: async () => {} };
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024 });
  return {
    async stop() {
      await session.post('HeapProfiler.collectGarbage');
      const { profile } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/** V8's old space in use, in MB. */
const oldSpace = () => (getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0) / 2 ** 20;

function summarize(timelines: Timeline[], commandPid: (t: Timeline) => number | undefined, pauses: GcPause[]): string[] {
  const byKind = new Map<string, { duration: number[]; cpu: number[]; wait: number[]; bytes: number; n: number }>();
  const gaps: number[] = [];
  const inFlight: number[] = [];
  for (const t of timelines) {
    const pid = commandPid(t);
    let busy = 0;
    for (const trip of t.trips) {
      const owner = trip.pid === pid ? 'command' : 'other';
      const key = `${owner}: ${kind(trip)}`;
      const entry = byKind.get(key) ?? { duration: [], cpu: [], wait: [], bytes: 0, n: 0 };
      entry.duration.push(trip.replyMs - trip.sentMs);
      entry.cpu.push(trip.backendCpuMs);
      entry.wait.push(trip.backendWaitMs);
      entry.bytes += trip.bytes;
      entry.n += 1;
      byKind.set(key, entry);
      if (owner === 'command') busy += trip.replyMs - trip.sentMs;
    }
    gaps.push(t.wallMs - busy);
    inFlight.push(t.trips.filter((trip) => trip.pid !== pid).length);
  }
  const lines = ['| round trip | per dispatch | bytes | send → reply p50 / p95 ms | backend CPU p50 / p95 ms | backend run-queue wait p50 / p95 ms |', '|---|---:|---:|---:|---:|---:|'];
  for (const [key, e] of [...byKind].toSorted((a, b) => b[1].n - a[1].n)) {
    const d = percentiles(e.duration);
    const c = percentiles(e.cpu);
    const w = percentiles(e.wait);
    lines.push(`| ${key} | ${(e.n / timelines.length).toFixed(2)} | ${Math.round(e.bytes / e.n)} | ${f(d.p50)} / ${f(d.p95)} | ${f(c.p50)} / ${f(c.p95)} | ${f(w.p50)} / ${f(w.p95)} |`);
  }
  const wall = percentiles(timelines.map((t) => t.wallMs));
  const mainCpu = percentiles(timelines.map((t) => t.mainCpuMs));
  const mainWait = percentiles(timelines.map((t) => t.mainWaitMs));
  const cpu = percentiles(timelines.map((t) => t.processCpuMs));
  const gap = percentiles(gaps);
  lines.push(
    '',
    `wall p50 / p95 / p99: ${f(wall.p50)} / ${f(wall.p95)} / ${f(wall.p99)} ms`,
    `Node main thread CPU p50 / p99: ${f(mainCpu.p50)} / ${f(mainCpu.p99)} ms; its run-queue wait p50 / p99: ${f(mainWait.p50)} / ${f(mainWait.p99)}; process CPU (all threads) p50 / p99: ${f(cpu.p50)} / ${f(cpu.p99)}`,
    `wall outside the command's round trips (Node's own segments) p50 / p99: ${f(gap.p50)} / ${f(gap.p99)} ms`,
    `other connections' round trips sent during a dispatch: mean ${(inFlight.reduce((a, b) => a + b, 0) / inFlight.length).toFixed(2)}`,
    ...[false, true].map((overlapped) => {
      const walls = timelines.filter((_, i) => (inFlight[i]! > 0) === overlapped).map((t) => t.wallMs);
      const p = percentiles(walls);
      return `dispatches ${overlapped ? 'with' : 'without'} another connection's round trip: ${walls.length}, wall p50 / p95 / p99 ${f(p.p50)} / ${f(p.p95)} / ${f(p.p99)} ms`;
    }),
    '',
    'slowest 12 dispatches (wall; main CPU, main wait; command trips as kind duration/backend CPU/backend wait; others sent meanwhile; GC pauses overlapping it, ms):',
  );
  for (const t of timelines.toSorted((a, b) => b.wallMs - a.wallMs).slice(0, 12)) {
    const pid = commandPid(t);
    const trips = t.trips.filter((trip) => trip.pid === pid).map((trip) => `${kind(trip)} ${f(trip.replyMs - trip.sentMs)}/${f(trip.backendCpuMs)}/${f(trip.backendWaitMs)}`);
    const gc = pauses.filter((p) => p.start + p.duration >= t.startedAt && p.start <= t.startedAt + t.wallMs).map((p) => `${p.kind} ${f(p.duration)}`);
    lines.push(`  ${f(t.wallMs)} ms; ${f(t.mainCpuMs)}, ${f(t.mainWaitMs)}; ${trips.join(' | ')}; others ${t.trips.length - trips.length}; GC ${gc.join(', ') || 'none'}`);
  }
  return lines;
}

async function main(): Promise<void> {
  // As `npm start` and bench:dispatch do first; `BENCH_HELPER_PRIORITY=default` leaves V8's helper threads at the default priority.
  if (process.env.BENCH_HELPER_PRIORITY !== 'default') progress(`${lowerHelperThreadPriority()} helper threads at the lowest CPU priority`);
  const { cleanups, cleanup } = prepareRun(progress);
  try {
    const database = await createBenchDatabase();
    cleanups.push({ name: 'drop database', run: database.drop });
    const services = await startBenchServices(database, 'dispatch-timeline', {}, cleanups);
    await services.db.migrate();
    const deps = dispatchDeps(services);
    const site = await seedEngineSite(services.db.orm, `timeline${DRIVERS}`);
    const teamId = await seedDrivers(services.db.orm, site, DRIVERS);
    const ctx = dispatcherContext(site);
    const jobs = await makeJobs(services.engine, ctx, site, SAMPLES + WARMUP + EXPLAINED);
    const dispatch = (jobId: string) =>
      services.engine.command(ctx, `job:${jobId}`, (scope) => dispatchByStrategy(deps, scope, { jobId, strategy: STRATEGY, method: 'team', teamId, requireConfirmation: false }));
    const analyze = () => analyzeDispatchTables(services.db.orm);
    if (process.env.BENCH_TIMELINE_ANALYZE === 'before') await analyze();
    const history = Number(process.env.BENCH_TIMELINE_HISTORY ?? 0);
    if (history > 0) {
      await seedDispatchHistory(services.db.orm, services.engine, deps, ctx, site, history);
      progress(`${history} jobs dispatched to a team of their own before`);
    }
    for (const jobId of jobs.slice(0, WARMUP)) await dispatch(jobId);
    if (process.env.BENCH_TIMELINE_ANALYZE === 'after') {
      await analyze();
      progress('analyzed after the warm-up');
    }
    progress(`${DRIVERS} drivers, ${STRATEGY}: recording ${SAMPLES} dispatches`);
    const oldBefore = oldSpace();
    const retained = await startRetainedProfile(process.env.BENCH_TIMELINE_RETAINED);
    const gc = recordGcPauses();
    const timelines = await recordTimelines(SAMPLES, async (i) => {
      await dispatch(jobs[WARMUP + i]!);
      if (process.env.SNAP && i === SAMPLES - 50) {
        const { writeHeapSnapshot } = await import('node:v8');
        writeHeapSnapshot(process.env.SNAP);
      }
    });
    const pauses = await gc.stop();
    await retained.stop();
    progress(`old space ${oldBefore.toFixed(1)} -> ${oldSpace().toFixed(1)} MB; pauses: ${pauses.map((p) => `${p.kind} ${f(p.duration)}`).join(', ')}`);
    // The command's connection: the one that sent the head read.
    const lines = summarize(timelines, (t) => t.trips.find((trip) => trip.statement.includes('dispatch_site_head'))?.pid, pauses);
    process.stdout.write(`${lines.join('\n')}\n`);
    for (const jobId of jobs.slice(WARMUP + SAMPLES)) {
      const sent: string[] = [];
      const plans = await explainRoundTrips(() => dispatch(jobId).then(() => undefined), /^dispatch_site_head/, /^(dispatch_driver_day|engine_stmt_)/, sent);
      if (process.env.BENCH_TIMELINE_SENT) writeFileSync(`${process.env.BENCH_TIMELINE_SENT}-${jobId}.sql`, sent.join('\n\n-- next round trip\n'));
      process.stdout.write(`\nexplained dispatch of ${jobId}:\n${plans.join('\n\n')}\n`);
    }
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
