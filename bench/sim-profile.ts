import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { simulateInProcess } from '../sim/simulate.ts';
import { DEFAULT_ADMIN_URL as ADMIN_URL, SimDatabases } from '../sim/sim-database.ts';
import { SiteApi } from '../sim/site-api.ts';
import { postgresCpu } from './support/postgres-cpu.ts';
import { countSocketWrites } from './support/socket-writes.ts';
import { benchDay, benchDayOptions } from './support/bench-day.ts';

/**
 * A diagnostic for `bench:sim` that runs the day as the bench does (calls overlapping) and says where its wall time
 * went: Node's CPU and event-loop use, PostgreSQL's CPU (the backends serving the run's database, from /proc), and per REST
 * operation its calls, mean latency and statements (attributed through AsyncLocalStorage); then how many calls were
 * in flight over time (a lone decision is the serial part of the day), and the socket writes' time against Node's
 * involuntary context switches (bench/support/socket-writes.ts).
 *
 *   node --import tsx bench/sim-profile.ts --hours 4 --jobs 1667
 */
const { values } = parseArgs({
  options: benchDayOptions({ jobs: '1667', hours: '4' }),
});

type Tally = { calls: number; latencyMs: number; statements: number; aloneMs: number };
const tallies = new Map<string, Tally>();
const operation = new AsyncLocalStorage<Tally>();
let counting = false;
let dayStartedMs = 0;
let lastAnswerMs = 0;
let analyzeMs = 0;

const clientPrototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const query = clientPrototype.query;
clientPrototype.query = function (this: unknown, ...args: unknown[]) {
  const tally = operation.getStore();
  if (tally) tally.statements += 1;
  const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
  if (typeof text === 'string' && /^\s*analyze\b/i.test(text)) {
    const started = performance.now();
    const done = () => (analyzeMs += performance.now() - started);
    // knex passes a callback (and gets no promise back); a plain client gets a promise.
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      args[args.length - 1] = (...answer: unknown[]) => (done(), (callback as (...a: unknown[]) => unknown)(...answer));
      return query.apply(this, args);
    }
    const result = query.apply(this, args) as Promise<unknown>;
    void result.finally(done);
    return result;
  }
  return query.apply(this, args);
};

/** Calls in flight, and the time spent at each count (the serial share of the day is the time at 1). */
let inFlight = 0;
let lastChange = performance.now();
const msAtCount = new Map<number, number>();
let loneName: string | null = null;
const inFlightNames = new Set<{ name: string }>();
function change(delta: number, entry: { name: string }): void {
  const now = performance.now();
  const spent = now - lastChange;
  msAtCount.set(inFlight, (msAtCount.get(inFlight) ?? 0) + spent);
  if (inFlight === 1 && loneName) tallies.get(loneName)!.aloneMs += spent;
  lastChange = now;
  inFlight += delta;
  if (delta > 0) inFlightNames.add(entry);
  else inFlightNames.delete(entry);
  loneName = inFlight === 1 ? [...inFlightNames][0]!.name : null;
}

const raw = SiteApi.prototype.raw;
SiteApi.prototype.raw = async function (method, path, body, credential) {
  const name = `${method} ${path.split('?')[0]}`;
  if (!counting && (name === 'PUT /api/driver/status' || name === 'POST /api/job')) {
    counting = true;
    dayStartedMs = performance.now();
    // The day starts here: the setup before it is not time at zero calls in flight.
    lastChange = dayStartedMs;
  }
  if (!counting) return raw.call(this, method, path, body, credential);
  const tally = tallies.get(name) ?? { calls: 0, latencyMs: 0, statements: 0, aloneMs: 0 };
  tallies.set(name, tally);
  const entry = { name };
  const started = performance.now();
  change(1, entry);
  try {
    return await operation.run(tally, () => raw.call(this, method, path, body, credential));
  } finally {
    tally.calls += 1;
    tally.latencyMs += performance.now() - started;
    lastAnswerMs = performance.now();
    change(-1, entry);
  }
};

/** PostgreSQL CPU of the run's own database (its backends, from /proc), sampled so backends that exit still count. */
let postgres: Awaited<ReturnType<typeof postgresCpu>> | null = null;
let postgresMicros = 0;
const fresh = SimDatabases.prototype.fresh;
SimDatabases.prototype.fresh = async function () {
  const database = await fresh.call(this);
  postgres = await postgresCpu(ADMIN_URL, database.name);
  return database;
};
const sample = () => void postgres?.micros().then((micros) => (postgresMicros = micros), () => undefined);

const hours = Number(values.hours);
const { plan, strategy } = benchDay(values);
const sampler = setInterval(sample, 200);
const sockets = countSocketWrites();
const cpu = process.cpuUsage();
const elu = performance.eventLoopUtilization();
const started = performance.now();
const sim = await simulateInProcess(plan, [strategy], {});
const wallMs = performance.now() - started;
clearInterval(sampler);
const used = process.cpuUsage(cpu);
const loop = performance.eventLoopUtilization(elu);
const written = sockets.since();
const out = (line: string) => process.stdout.write(`${line}\n`);
const result = sim.comparison.strategies[strategy]!;
out(`${plan.drivers.length} drivers, ${plan.jobs.length} jobs, ${strategy}, ${hours} h; ${result.summary.completed} completed; wall ${(wallMs / 1000).toFixed(1)} s (run ${(sim.wallMs[strategy]! / 1000).toFixed(1)} s)`);
out(`Node CPU ${((used.user + used.system) / 1e6).toFixed(1)} s (user ${(used.user / 1e6).toFixed(1)}, sys ${(used.system / 1e6).toFixed(1)}); event loop busy ${(loop.utilization * 100).toFixed(1)}%; PostgreSQL CPU (the run's database) ${(postgresMicros / 1e6).toFixed(1)} s`);
out(`setup until the first call of the day ${((dayStartedMs - started) / 1000).toFixed(1)} s; the day's calls ${((lastAnswerMs - dayStartedMs) / 1000).toFixed(1)} s; after the last ${((started + wallMs - lastAnswerMs) / 1000).toFixed(1)} s; analyze ${(analyzeMs / 1000).toFixed(1)} s`);
out(`socket writes ${written.writes}, ${(written.writeMs / 1000).toFixed(1)} s inside them (${((written.writeMs * 1000) / Math.max(1, written.writes)).toFixed(0)} µs each); Node's context switches: ${written.voluntarySwitches} voluntary, ${written.involuntarySwitches} involuntary`);
out('operation | calls | mean latency ms | statements/call | alone s | total latency s');
for (const [name, t] of [...tallies].sort((a, b) => b[1].latencyMs - a[1].latencyMs)) {
  out(`${name} | ${t.calls} | ${(t.latencyMs / t.calls).toFixed(2)} | ${(t.statements / t.calls).toFixed(2)} | ${(t.aloneMs / 1000).toFixed(1)} | ${(t.latencyMs / 1000).toFixed(1)}`);
}
const byCount = [...msAtCount].sort((a, b) => a[0] - b[0]);
const many = byCount.filter(([n]) => n > 16).reduce((sum, [, ms]) => sum + ms, 0);
out(`time by calls in flight (s): ${byCount.filter(([n]) => n <= 16).map(([n, ms]) => `${n}: ${(ms / 1000).toFixed(1)}`).join(', ')}, more: ${(many / 1000).toFixed(1)}`);
process.exit(0);
