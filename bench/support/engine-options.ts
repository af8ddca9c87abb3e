
/**
 * Options of `bench/engine.ts` for short runs while iterating (the README's figures use the defaults):
 * - BENCH_SECONDS / BENCH_WARMUP: measured and warm-up seconds per workload (10 and 3);
 * - BENCH_WORKLOADS: the sequence of workloads, e.g. `raw,stop,raw` (default `raw,job,stop,raw`);
 * - BENCH_SKIP_ACTORS=1: skips (a), the idle-actor and machine-rate phase;
 * - BENCH_SKIP_COUNT=1: skips counting statements (and the audit/outbox check that follows it);
 * - BENCH_CPU_PROFILE=<file>: a V8 CPU profile of the measured part of the first `stop` workload
 *   (BENCH_PROFILE_WORKLOAD=job profiles the job workload instead);
 * - BENCH_WAIT_EVENTS=1: samples what the database's backends do during each measured command workload (working,
 *   waiting for the WAL flush, waiting for Node, ...) and prints it (support/wait-events.ts).
 */
export type EngineBenchOptions = {
  seconds: number;
  warmup: number;
  workloads: ('raw' | 'job' | 'stop')[];
  skipActors: boolean;
  skipCount: boolean;
  profileFile: string | undefined;
  profileWorkload: 'job' | 'stop';
  waitEvents: boolean;
  /** The BENCH_ variables set, if any (such a run does not replace bench/results/engine.json). */
  custom: string;
};

export function engineBenchOptions(env: NodeJS.ProcessEnv = process.env): EngineBenchOptions {
  const workloads = (env.BENCH_WORKLOADS ?? 'raw,job,stop,raw').split(',').map((w) => w.trim());
  for (const w of workloads) if (w !== 'raw' && w !== 'job' && w !== 'stop') throw new Error(`BENCH_WORKLOADS: unknown workload ${w}`);
  return {
    seconds: Number(env.BENCH_SECONDS ?? 10),
    warmup: Number(env.BENCH_WARMUP ?? 3),
    workloads: workloads as EngineBenchOptions['workloads'],
    skipActors: env.BENCH_SKIP_ACTORS === '1',
    skipCount: env.BENCH_SKIP_COUNT === '1',
    profileFile: env.BENCH_CPU_PROFILE,
    profileWorkload: env.BENCH_PROFILE_WORKLOAD === 'job' ? 'job' : 'stop',
    waitEvents: env.BENCH_WAIT_EVENTS === '1',
    custom: Object.keys(env).filter((name) => name.startsWith('BENCH_')).join(', '),
  };
}
