/**
 * Engine benchmark (the issue's two goals):
 * (a) idle actors held per GiB of heap (goal: ≥ 150k), and actor rehydration (`restoreSnapshot` from `{value}`)
 *     and `applyEvent` per second, on the default job workflow, with no database;
 * (b) commands per second through the whole command path (validate → actor → transaction → audit → outbox, via
 *     `engine.transition`) as a ratio to raw `pg` single-row INSERTs in the same database, same run, same pool
 *     size and concurrency (goal: ≥ 0.3×).
 *
 * Setup, and why:
 * - (a) runs first, on a heap with nothing else in it, and needs `--expose-gc` for exact before/after figures.
 * - (b) uses a fresh PostgreSQL database, migrated here and dropped at the end, reached as a non-superuser role
 *   (as bench/http.ts: row-level security applies as in production), and Redis: after each commit the engine kicks
 *   the outbox relay, which moves the new rows to BullMQ (as deployed; without Redis they would go to a table).
 * - Workloads run one after the other, raw first and again last: the ratios use the mean of both raw runs, and
 *   the two rows show how much the machine drifted (on 2 cores, anything else running moves every number).
 * - After the measured phases, commands run again with every SQL statement counted (the round trips each command
 *   costs), 16 in flight as measured (group commit shares a transaction among them) and then one at a time (a group
 *   of one), and the audit and outbox rows are checked against the commands that succeeded.
 *
 * Run: `npm run bench:engine`, i.e. `node --expose-gc --max-semi-space-size=64 --import tsx bench/engine.ts`, Node as `npm start` runs the server (about 90 s). Progress on stderr, tables on stdout, JSON in bench/results/.
 * Shorter runs and a CPU profile: see `support/engine-options.ts` (BENCH_SECONDS, BENCH_WORKLOADS, BENCH_CPU_PROFILE, ...).
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import { defaultJobWorkflow, measureIdleActors, measureRates, type MemoryResult } from './support/actor-memory.ts';
import { startBenchServices, prepareRun } from './support/bench-services.ts';
import { createBenchDatabase, settleWrites } from './support/bench-database.ts';
import { measureLoop, type LoopResult, type LoopSettings, type PostgresProbe } from './support/command-load.ts';
import { createJobs, dispatcherContext, seedEngineSite } from './support/engine-seed.ts';
import { gitCommit, machineLine } from './support/environment.ts';
import { formatEngineReport, type CommandRow } from './support/engine-report.ts';
import { whole } from './support/grid.ts';
import { countQueries, type QueryCount } from './support/query-counter.ts';
import { writeResults } from './support/report.ts';
import { createRawInserter, cycleEntities, type Operation } from './support/workloads.ts';
import { startCpuProfile } from './support/cpu-profile.ts';
import { engineBenchOptions } from './support/engine-options.ts';
import { databaseActivity, type ActivityDelta } from './support/database-activity.ts';
import { postgresCpu } from './support/postgres-cpu.ts';
import { startWaitEvents } from './support/wait-events.ts';

const IDLE_ACTORS = 200_000;
const RATE_SECONDS = 2;
const OPTIONS = engineBenchOptions();
const LOOP: LoopSettings = { concurrency: 16, warmupSeconds: OPTIONS.warmup, durationSeconds: OPTIONS.seconds };
/** Per workload: 16 per lane, so a lane comes back to a job only after 15 other commands of its own. */
const JOBS = 256;
const COUNTED_COMMANDS = 320;
/** Commands counted one at a time: what a lone command costs (a group of one). */
const LONE_COMMANDS = 20;
const GOALS = { actorsPerGiB: 150_000, ratioToRaw: 0.3 };
const RESULTS_FILE = fileURLToPath(new URL('./results/engine.json', import.meta.url));

const verdict = (met: boolean): string => (met ? 'met' : 'NOT met');
const progress = (line: string) => process.stderr.write(`[bench:engine] ${line}\n`);

function idleActorPhase(): { memory: MemoryResult[]; rates: ReturnType<typeof measureRates> } {
  const workflow = defaultJobWorkflow();
  const memory = (['after create', 'after a move'] as const).map((source) => {
    progress(`idle actors: filling an ActorRegistry with ${IDLE_ACTORS.toLocaleString('en-US')} snapshots (${source})`);
    const result = measureIdleActors(workflow, source, IDLE_ACTORS);
    progress(`idle actors (${source}): ${Math.round(result.bytesPerActor)} bytes each, ${whole(result.actorsPerGiB)} per GiB`);
    return result;
  });
  progress(`rehydration: ${RATE_SECONDS} s per operation`);
  return { memory, rates: measureRates(workflow, RATE_SECONDS) };
}

async function main(): Promise<void> {
  if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc (npm run bench:engine)');
  const { cleanups, cleanup, loadBefore } = prepareRun(progress);
  try {
    const actors = OPTIONS.skipActors ? { memory: [], rates: [] } : idleActorPhase();

    const database = await createBenchDatabase();
    cleanups.push({ name: 'drop database', run: database.drop });
    progress(`created database ${database.name}`);
    const services = await startBenchServices(database, 'engine', {}, cleanups);
    const { config } = services;
    const migrations = await services.db.migrate();
    const site = await seedEngineSite(services.db.orm, 'bench');
    const ctx = dispatcherContext(site);
    progress(`migrated (${migrations.length} migrations); creating ${2 * JOBS} jobs through engine.command`);
    const jobs = await createJobs(services.engine, ctx, site.customerUserId, 2 * JOBS, LOOP.concurrency);
    // Statistics, as autovacuum keeps them where it runs (it is off on the benchmark machine, and would not have run
    // yet: the workloads start seconds after the seed). Without them the planner, seeing a never-analyzed `job` table, found the
    // job a move updates through its site's driver index (`job_site_driver_idx`, leading on site_id: every job of the
    // site and its dead versions read per move) rather than by its primary key, once per job command.
    await services.db.orm.em.fork().execute('analyze job, stop, route, address, outbox, audit_record');
    const raw = await createRawInserter(database.url, config.databasePoolSize);
    cleanups.push({ name: 'close raw pool', run: () => raw.close() });
    const activity = await databaseActivity(database.url);
    cleanups.push({ name: 'close activity probe', run: () => activity.close() });
    const pgCpu = await postgresCpu(database.url, database.name);
    cleanups.push({ name: 'close PostgreSQL CPU probe', run: () => pgCpu.close() });
    const probe: PostgresProbe = { cpuMicros: () => pgCpu.micros(), walBytes: async () => (await activity.sample()).raw.walBytes };

    // Separate jobs for the two command workloads: a job dispatch also moves its stop.
    let moves = 0;
    const counted = (operation: Operation, entities: number): Operation => async (lane) => {
      await operation(lane);
      moves += entities;
    };
    const jobCycle = counted(cycleEntities(services.engine, ctx, 'job', jobs.slice(0, JOBS).map((j) => j.id), LOOP.concurrency), 2);
    const stopCycle = counted(cycleEntities(services.engine, ctx, 'stop', jobs.slice(JOBS).map((j) => j.stopId), LOOP.concurrency), 1);
    const named = {
      raw: ['raw pg INSERT (1 row)', raw.operation],
      job: ['job dispatch/return (+1 stop cascade)', jobCycle],
      stop: ['stop dispatch/return (no cascade)', stopCycle],
    } as const;
    const measured: (LoopResult & { postgres: ActivityDelta })[] = [];
    let profiled = false;
    for (const [index, key] of OPTIONS.workloads.entries()) {
      const [base, operation] = named[key];
      const name = key === 'raw' && OPTIONS.workloads.indexOf('raw') < index ? `${base.slice(0, -1)}, again)` : base;
      // Each workload starts with nothing left to write from the one before.
      await settleWrites();
      const profileThis: boolean = !profiled && key === OPTIONS.profileWorkload && OPTIONS.profileFile !== undefined;
      // A profile covers the measured part only: the warm-up runs first, outside it.
      if (profileThis) await measureLoop(`${name} (warm-up)`, { ...LOOP, warmupSeconds: 0, durationSeconds: LOOP.warmupSeconds }, operation, progress);
      const profiler = await startCpuProfile(profileThis ? OPTIONS.profileFile : undefined);
      const before = await activity.sample();
      const waits = OPTIONS.waitEvents && key !== 'raw' ? await startWaitEvents(database.url, database.name) : null;
      const result = await measureLoop(name, profileThis ? { ...LOOP, warmupSeconds: 0 } : LOOP, operation, progress, probe);
      const postgres = (await activity.sample()).since(before);
      await profiler.stop();
      if (waits) progress(`${name}: backends on average (warm-up and run)\n${(await waits.stop()).map((w) => `  ${w.backends.toFixed(3)}  ${w.what}`).join('\n')}`);
      if (profileThis) progress(`CPU profile of ${name}: ${OPTIONS.profileFile}`);
      profiled ||= profileThis;
      progress(`${name}: PostgreSQL during warm-up and run: ${JSON.stringify(postgres)}`);
      measured.push({ ...result, postgres });
    }

    const { queries, alone } = OPTIONS.skipCount ? { queries: {}, alone: {} } : await countStatements(jobCycle, stopCycle, raw.operation);
    // Every successful move must have left exactly one audit record and one outbox row in its transaction.
    const [written] = await inTenantScope(services.db.orm, { siteId: site.siteId }, (em) =>
      em.execute<{ audits: number; outbox: number; pending: number }[]>(
        `select (select count(*)::int from audit_record where action = 'state_change') as audits,
                (select count(*)::int from outbox where event like '%:state_change') as outbox,
                (select count(*)::int from outbox_pending) as pending`,
      ),
    );
    if (written?.audits !== moves || written.outbox !== moves) {
      throw new Error(`${moves} moves succeeded but ${written?.audits} audit records and ${written?.outbox} outbox rows were written`);
    }
    // Pending rows would mean the relay fell behind the commands (it is kicked after each commit, not awaited).
    progress(`checked: ${moves} moves, ${written.audits} audit records, ${written.outbox} outbox rows; ${written.pending} rows not yet relayed`);

    const raws = measured.filter((m) => m.workload.startsWith('raw'));
    const baseline = raws.reduce((sum, m) => sum + m.perSecond, 0) / raws.length;
    const queriesOf = (workload: string) => Object.entries(queries).find(([name]) => workload.startsWith(name))?.[1];
    const rows: CommandRow[] = measured.map((m) => ({ ...m, ratioToRaw: m.perSecond / baseline, queries: queriesOf(m.workload) }));
    const worstActors = actors.memory.length === 0 ? Number.NaN : Math.min(...actors.memory.map((m) => m.actorsPerGiB));
    const worstRatio = Math.min(...rows.filter((r) => !r.workload.startsWith('raw')).map((r) => r.ratioToRaw));
    const setup = [
      machineLine(loadBefore),
      `(a) ${IDLE_ACTORS.toLocaleString('en-US')} idle actors per source in an ActorRegistry; heapUsed after full GCs, before and after; default job workflow`,
      `(b) PostgreSQL as a non-superuser (RLS on), pool ${config.databasePoolSize} for the app and for raw pg; transitions group-committed; outbox relay on, to BullMQ on Redis; ` +
        `${LOOP.concurrency} in flight, ${LOOP.warmupSeconds} s warm-up discarded, ${LOOP.durationSeconds} s measured; ${JOBS} jobs per command workload, 1 stop each`,
    ];
    process.stdout.write(`\n${setup.join('\n')}\n\n${formatEngineReport(actors.memory, actors.rates, rows, alone)}\n\n`);
    process.stdout.write(`goal (≥ ${whole(GOALS.actorsPerGiB)} idle actors per GiB): ${verdict(worstActors >= GOALS.actorsPerGiB)} (${whole(worstActors)})\n`);
    process.stdout.write(`${baselineLine(raws.map((m) => m.perSecond))}\n`);
    process.stdout.write(`goal (commands ≥ ${GOALS.ratioToRaw}× raw inserts): ${verdict(worstRatio >= GOALS.ratioToRaw)} (${worstRatio.toFixed(2)}×)\n`);
    if (OPTIONS.custom) {
      progress(`options set (${OPTIONS.custom}): ${RESULTS_FILE} left as it was`);
      return;
    }
    writeResults(RESULTS_FILE, {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      commit: gitCommit(),
      setup,
      goals: GOALS,
      idleActors: actors.memory,
      machineRates: actors.rates,
      commands: { settings: LOOP, jobsPerWorkload: JOBS, rawBaseline: baseline, results: rows, statementsAlone: alone, moves, pendingOutboxAtEnd: written.pending },
    });
    progress(`wrote ${RESULTS_FILE}`);
  } finally {
    await cleanup();
  }
}

/**
 * The baseline's own steadiness: the raw runs (before and after the commands) and how far apart they are. A gap
 * above 20% means something else ran on the machine during one of them; the ratios then lean on a disturbed mean.
 */
function baselineLine(rates: number[]): string {
  const mean = rates.reduce((sum, r) => sum + r, 0) / rates.length;
  const spread = rates.length > 1 ? (Math.max(...rates) - Math.min(...rates)) / mean : 0;
  const runs = rates.map((r) => whole(r)).join(' / ');
  const warning = spread > 0.2 ? ' — DISTURBED: the raw runs differ by more than 20%, compare CPU per operation instead' : '';
  return `raw baseline: ${runs} per s (mean ${whole(mean)}, spread ${(100 * spread).toFixed(0)}%)${warning}`;
}

/** The statements (round trips) each command costs: 16 in flight as measured, then one at a time (a group of one). */
async function countStatements(jobCycle: Operation, stopCycle: Operation, rawInsert: Operation): Promise<{ queries: Record<string, QueryCount>; alone: Record<string, QueryCount> }> {
  progress(`counting SQL statements over ${COUNTED_COMMANDS} commands of each kind, ${LOOP.concurrency} in flight, then one at a time`);
  const inFlight = (operation: Operation) => countQueries(COUNTED_COMMANDS, (i) => operation(i % LOOP.concurrency), LOOP.concurrency);
  const queries: Record<string, QueryCount> = {
    'job dispatch/return': await inFlight(jobCycle),
    'stop dispatch/return': await inFlight(stopCycle),
    'raw pg INSERT': await inFlight(rawInsert),
  };
  const alone: Record<string, QueryCount> = {
    'job dispatch/return, alone': await countQueries(LONE_COMMANDS, () => jobCycle(0)),
    'stop dispatch/return, alone': await countQueries(LONE_COMMANDS, () => stopCycle(0)),
  };
  return { queries, alone };
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench:engine] FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
