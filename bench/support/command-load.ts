import { performance } from 'node:perf_hooks';

/** The same shape for every workload, so the ratios compare the work, not the settings. */
export type LoopSettings = { concurrency: number; warmupSeconds: number; durationSeconds: number };

export type LoopResult = {
  workload: string;
  operations: number;
  seconds: number;
  perSecond: number;
  latencyMs: { mean: number; p50: number; p99: number; max: number };
  /** This process's CPU time (user + system, every thread: GC, the relay, the pool) per operation, and per second of wall time. */
  cpu: { msPerOperation: number; coresBusy: number };
  /** CPU time of the PostgreSQL backends serving the bench database per operation (with `postgresMicros`), else null. */
  postgresMsPerOperation: number | null;
  /** WAL PostgreSQL wrote per operation, in KB (with a probe; cluster-wide, so meaningful on a machine held by the bench), else null. */
  walKbPerOperation: number | null;
};

/** What the database did so far, sampled around the measured loop: its backends' CPU time (µs) and the WAL position (bytes). */
export type PostgresProbe = { cpuMicros(): Promise<number>; walBytes(): Promise<number> };

/** Runs `work(i)` for i in [0, count) with at most `concurrency` in flight; the first failure rejects. */
export async function inParallel(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * A closed loop: `concurrency` lanes, each awaiting `operation(lane)` and starting the next as soon as it returns,
 * until the deadline. Operations still in flight at the deadline are awaited and counted, and the elapsed time runs
 * until the last one ends, so the rate is exactly completed operations over wall time.
 */
async function loop(
  concurrency: number,
  seconds: number,
  operation: (lane: number) => Promise<void>,
  probe?: PostgresProbe,
): Promise<{ latencies: number[]; seconds: number; cpuMs: number; postgres: { ms: number; walBytes: number } | null }> {
  const latencies: number[] = [];
  const before = probe ? { micros: await probe.cpuMicros(), wal: await probe.walBytes() } : null;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      while (performance.now() < deadline) {
        const began = performance.now();
        await operation(lane);
        latencies.push(performance.now() - began);
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  const elapsed = (performance.now() - start) / 1000;
  const postgres = before && probe ? { ms: ((await probe.cpuMicros()) - before.micros) / 1000, walBytes: (await probe.walBytes()) - before.wal } : null;
  return { latencies, seconds: elapsed, cpuMs: (used.user + used.system) / 1000, postgres };
}

/**
 * A discarded warm-up (JIT, pool connections, PostgreSQL's caches) then the measured loop; `probe` (the database
 * backends' CPU time and the WAL position) is sampled around the measured loop only.
 * @throws the first failed operation: a benchmark of errors is worthless
 */
export async function measureLoop(
  workload: string,
  settings: LoopSettings,
  operation: (lane: number) => Promise<void>,
  progress: (line: string) => void,
  probe?: PostgresProbe,
): Promise<LoopResult> {
  progress(`${workload}: warm-up ${settings.warmupSeconds} s, ${settings.concurrency} in flight`);
  await loop(settings.concurrency, settings.warmupSeconds, operation);
  progress(`${workload}: measuring ${settings.durationSeconds} s`);
  const run = await loop(settings.concurrency, settings.durationSeconds, operation, probe);
  const sorted = run.latencies.toSorted((a, b) => a - b);
  const result: LoopResult = {
    workload,
    operations: sorted.length,
    seconds: run.seconds,
    perSecond: sorted.length / run.seconds,
    latencyMs: {
      mean: round(sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length),
      p50: round(percentile(sorted, 50)),
      p99: round(percentile(sorted, 99)),
      max: round(sorted.at(-1) ?? 0),
    },
    cpu: { msPerOperation: Math.round((1000 * run.cpuMs) / sorted.length) / 1000, coresBusy: round(run.cpuMs / 1000 / run.seconds) },
    postgresMsPerOperation: run.postgres === null ? null : Math.round((1000 * run.postgres.ms) / sorted.length) / 1000,
    walKbPerOperation: run.postgres === null ? null : Math.round((100 * run.postgres.walBytes) / 1024 / sorted.length) / 100,
  };
  const postgres = run.postgres === null ? '' : `, PostgreSQL ${result.postgresMsPerOperation} ms CPU and ${result.walKbPerOperation} KB WAL each`;
  progress(`${workload}: ${Math.round(result.perSecond)} ops/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ${result.cpu.msPerOperation} ms CPU each (${result.cpu.coresBusy} cores busy)${postgres}`);
  return result;
}
