/**
 * Engine benchmark (the two goals):
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
 * Run: `npm run bench:engine`, i.e. `node --expose-gc --import tsx bench/engine.ts` (about 90 s). Progress on stderr, tables on stdout, JSON in bench/results/.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { inTenantScope } from '../persistence/tenant-scope.ts';
import { defaultJobWorkflow, measureIdleActors, measureRates, type MemoryResult } from './support/actor-memory.ts';
import { startBenchServices, prepareRun } from './support/bench-services.ts';
import { createBenchDatabase } from './support/bench-database.ts';
import { measureLoop, type LoopResult, type LoopSettings } from './support/command-load.ts';
import { createJobs, dispatcherContext, seedEngineSite } from './support/engine-seed.ts';
import { gitCommit, machineLine } from './support/environment.ts';
import { formatEngineReport, type CommandRow } from './support/engine-report.ts';
import { whole } from './support/grid.ts';
import { countQueries, type QueryCount } from './support/query-counter.ts';
import { writeResults } from './support/report.ts';
import { createRawInserter, cycleEntities, type Operation } from './support/workloads.ts';

const IDLE_ACTORS = 200_000;
const RATE_SECONDS = 2;
const LOOP: LoopSettings = { concurrency: 16, warmupSeconds: 3, durationSeconds: 10 };
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
    const actors = idleActorPhase();

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
    const raw = await createRawInserter(database.url, config.databasePoolSize);
    cleanups.push({ name: 'close raw pool', run: () => raw.close() });

    // Separate jobs for the two command workloads: a job dispatch also moves its stop.
    let moves = 0;
    const counted = (operation: Operation, entities: number): Operation => async (lane) => {
      await operation(lane);
      moves += entities;
    };
    const jobCycle = counted(cycleEntities(services.engine, ctx, 'job', jobs.slice(0, JOBS).map((j) => j.id), LOOP.concurrency), 2);
    const stopCycle = counted(cycleEntities(services.engine, ctx, 'stop', jobs.slice(JOBS).map((j) => j.stopId), LOOP.concurrency), 1);
    const workloads: [string, Operation][] = [
      ['raw pg INSERT (1 row)', raw.operation],
      ['job dispatch/return (+1 stop cascade)', jobCycle],
      ['stop dispatch/return (no cascade)', stopCycle],
      ['raw pg INSERT (1 row, again)', raw.operation],
    ];
    const measured: LoopResult[] = [];
    for (const [name, operation] of workloads) measured.push(await measureLoop(name, LOOP, operation, progress));

    progress(`counting SQL statements over ${COUNTED_COMMANDS} commands of each kind, ${LOOP.concurrency} in flight, then one at a time`);
    const inFlight = (operation: Operation) => countQueries(COUNTED_COMMANDS, (i) => operation(i % LOOP.concurrency), LOOP.concurrency);
    const queries: Record<string, QueryCount> = {
      'job dispatch/return': await inFlight(jobCycle),
      'stop dispatch/return': await inFlight(stopCycle),
      'raw pg INSERT': await inFlight(raw.operation),
    };
    const alone: Record<string, QueryCount> = {
      'job dispatch/return, alone': await countQueries(LONE_COMMANDS, () => jobCycle(0)),
      'stop dispatch/return, alone': await countQueries(LONE_COMMANDS, () => stopCycle(0)),
    };
    // Every successful move must have left exactly one audit record and one outbox row in its transaction.
    const [written] = await inTenantScope(services.db.orm, { siteId: site.siteId }, (em) =>
      em.execute<{ audits: number; outbox: number; pending: number }[]>(
        `select (select count(*)::int from audit_record where action = 'state_change') as audits,
                (select count(*)::int from outbox where event like '%:state_change') as outbox,
                (select count(*)::int from outbox where relayed_at is null) as pending`,
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
    const worstActors = Math.min(...actors.memory.map((m) => m.actorsPerGiB));
    const worstRatio = Math.min(...rows.filter((r) => !r.workload.startsWith('raw')).map((r) => r.ratioToRaw));
    const setup = [
      machineLine(loadBefore),
      `(a) ${IDLE_ACTORS.toLocaleString('en-US')} idle actors per source in an ActorRegistry; heapUsed after full GCs, before and after; default job workflow`,
      `(b) PostgreSQL as a non-superuser (RLS on), pool ${config.databasePoolSize} for the app and for raw pg; transitions group-committed; outbox relay on, to BullMQ on Redis; ` +
        `${LOOP.concurrency} in flight, ${LOOP.warmupSeconds} s warm-up discarded, ${LOOP.durationSeconds} s measured; ${JOBS} jobs per command workload, 1 stop each`,
    ];
    process.stdout.write(`\n${setup.join('\n')}\n\n${formatEngineReport(actors.memory, actors.rates, rows, alone)}\n\n`);
    process.stdout.write(`goal (≥ ${whole(GOALS.actorsPerGiB)} idle actors per GiB): ${verdict(worstActors >= GOALS.actorsPerGiB)} (${whole(worstActors)})\n`);
    process.stdout.write(`goal (commands ≥ ${GOALS.ratioToRaw}× raw inserts): ${verdict(worstRatio >= GOALS.ratioToRaw)} (${worstRatio.toFixed(2)}×)\n`);
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

main().catch((error: unknown) => {
  process.stderr.write(`[bench:engine] FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
