import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { simulateInProcess } from '../sim/simulate.ts';
import { SiteApi } from '../sim/site-api.ts';
import { benchDay, benchDayOptions } from './support/bench-day.ts';
import { startCpuProfile } from './support/cpu-profile.ts';

/**
 * A diagnostic for `bench:sim`: CPU time, wall time and SQL statements per REST call, by operation, over the speed
 * run's day (`--hours`, `--jobs`, `--drivers`, `--strategy` as in bench/sim.ts). The simulator's calls are made ONE
 * AT A TIME here (each waits for the one before), so `process.cpuUsage` around a call measures that call alone; the
 * run is slower than `bench:sim` and its wall time means nothing. Statements are counted by wrapping `pg`'s
 * `Client.query` (as bench/support/query-counter.ts does). Fleet setup is not counted: the day starts with the first
 * driver status or job. `--cpu-profile <file>` profiles the day (V8's sampler) and writes `<file>.calls.json` beside it:
 * each call's operation and its start and end on the profile's clock (microseconds), so the samples can be split by
 * operation (`node bench/support/profile-by-call.ts <file>`).
 *
 *   node --import tsx bench/sim-calls.ts --hours 1.2 --jobs 500
 */
const { values } = parseArgs({
  options: { ...benchDayOptions({ jobs: '500', hours: '1.2' }), 'cpu-profile': { type: 'string' } },
});

type Tally = { calls: number; cpuMs: number; systemMs: number; wallMs: number; statements: number };
const profileFile = values['cpu-profile'];
/** The day's profiler, once its first call started it. */
const profiling: { profiler?: { stop(): Promise<void> } } = {};
/** [operation, start µs, end µs] per call, on the monotonic clock the profiler stamps its samples with. */
const callSpans: [string, number, number][] = [];
const microseconds = () => Number(process.hrtime.bigint() / 1000n);
const tallies = new Map<string, Tally>();
let statements = 0;
let counting = false;

const clientPrototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const query = clientPrototype.query;
clientPrototype.query = function (this: unknown, ...args: unknown[]) {
  statements += 1;
  return query.apply(this, args);
};

let previous: Promise<unknown> = Promise.resolve();
const raw = SiteApi.prototype.raw;
SiteApi.prototype.raw = function (method, path, body, credential) {
  const name = `${method} ${path.split('?')[0]}`;
  const measured = async () => {
    if (!counting && (name === 'PUT /api/driver/status' || name === 'POST /api/job')) {
      counting = true;
      if (profileFile) profiling.profiler = await startCpuProfile(profileFile);
    }
    const startedUs = microseconds();
    const cpu = process.cpuUsage();
    const started = performance.now();
    statements = 0;
    try {
      return await raw.call(this, method, path, body, credential);
    } finally {
      if (counting) {
        const used = process.cpuUsage(cpu);
        if (profileFile) callSpans.push([name, startedUs, microseconds()]);
        const tally = tallies.get(name) ?? { calls: 0, cpuMs: 0, systemMs: 0, wallMs: 0, statements: 0 };
        tally.calls += 1;
        tally.cpuMs += (used.user + used.system) / 1000;
        tally.systemMs += used.system / 1000;
        tally.wallMs += performance.now() - started;
        tally.statements += statements;
        tallies.set(name, tally);
      }
    }
  };
  const call = previous.then(measured, measured);
  previous = call.catch(() => undefined);
  return call;
};

const hours = Number(values.hours);
const { plan, strategy } = benchDay(values);
const sim = await simulateInProcess(plan, [strategy], {});
if (profiling.profiler) {
  await profiling.profiler.stop();
  writeFileSync(`${profileFile}.calls.json`, JSON.stringify(callSpans));
}
const out = (line: string) => process.stdout.write(`${line}\n`);
out(`${plan.drivers.length} drivers, ${plan.jobs.length} jobs, ${strategy}, ${hours} h; ${sim.comparison.strategies[strategy]!.summary.completed} jobs completed`);
out('operation | calls | CPU ms/call | of it system | wall ms/call | statements/call | CPU s total');
let all = { calls: 0, cpuMs: 0, systemMs: 0 };
for (const [name, t] of [...tallies].sort((a, b) => b[1].cpuMs - a[1].cpuMs)) {
  all = { calls: all.calls + t.calls, cpuMs: all.cpuMs + t.cpuMs, systemMs: all.systemMs + t.systemMs };
  out(`${name} | ${t.calls} | ${(t.cpuMs / t.calls).toFixed(2)} | ${(t.systemMs / t.calls).toFixed(2)} | ${(t.wallMs / t.calls).toFixed(2)} | ${(t.statements / t.calls).toFixed(1)} | ${(t.cpuMs / 1000).toFixed(1)}`);
}
out(`all | ${all.calls} | ${(all.cpuMs / all.calls).toFixed(2)} | ${(all.systemMs / all.calls).toFixed(2)} | | | ${(all.cpuMs / 1000).toFixed(1)}`);
process.exit(0);
