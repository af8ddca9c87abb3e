/**
 * Webhook benchmark (issue 6): deliveries per second through the whole path (committed outbox row → relay, which
 * fans out into the `webhooks` queue, one job per relayed batch and subscription → one signed HTTPS POST per event →
 * attempt recorded) to a local receiver, and commit-to-arrival latency at a
 * fixed 500 events/s, beside raw BullMQ no-op jobs on the same Redis in the same run.
 * Goals: throughput ≥ 0.5× raw BullMQ; p99 < 100 ms at 500 events/s.
 *
 * Setup, and why:
 * - Fresh PostgreSQL database (migrated here, dropped at the end) reached as a non-superuser role, so row-level
 *   security applies as in production; BullMQ on local Redis under a key prefix of its own, deleted at the end.
 * - NODE_ENV=test in the config given to loadConfig, because WEBHOOK_ALLOW_LOOPBACK=true (needed to POST to
 *   127.0.0.1) is refused in production. Nothing else in the code reads NODE_ENV; the delivery path is the same.
 * - The receiver (bench/support/webhook-receiver-process.ts) runs in a child process, as a receiver would be another
 *   machine: HTTPS on 127.0.0.1, self-signed certificate trusted through the workers' `ca` option, answers 204 after
 *   verifying the hex `X-Webhook-Signature` (HMAC-SHA256, constant time); a mismatch fails the run.
 * - One site, one matching subscription, so one event = one delivery. Webhook workers as startWebhookDelivery starts
 *   them (its default delivery concurrency; BENCH_CONCURRENCY overrides it); raw BullMQ uses
 *   the deliveries' concurrency and a no-op processor.
 * - Throughput: N rows committed (tenant transactions of 100) with the relay idle, then it is kicked; time until the
 *   receiver has all N. Raw: N jobs added with the worker stopped, then it starts; time until the last one ran.
 *   Diagnostic row: the relay alone, fan-out included (relayOnce on N rows before any worker starts); those N then
 *   warm the path up.
 * - Latency: open loop at 500/s for 10 s (rows committed on a 10 ms timer, each stamped when COMMIT returned, then
 *   the relay kicked as engine.onCommit does; relay polling on). Raw: same rate, stamped when `add` resolved.
 *
 * - BENCH_CPU_PROFILE=<file>: a V8 CPU profile of this process during the throughput burst.
 *
 * Run: `npm run bench:webhooks` = `node --import tsx bench/webhooks.ts` (about 60 s). Progress on stderr, table on
 * stdout, JSON in bench/results/webhooks.json.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DELIVERY_CONCURRENCY, startWebhookDelivery } from '../engine/webhooks/start-webhook-delivery.ts';
import { startCpuProfile } from './support/cpu-profile.ts';
import { startBenchServices, prepareRun } from './support/bench-services.ts';
import { createBenchDatabase } from './support/bench-database.ts';
import { seedEngineSite } from './support/engine-seed.ts';
import { gitCommit, machineLine } from './support/environment.ts';
import { whole } from './support/grid.ts';
import { openLoop, percentiles, wallNow } from './support/open-loop.ts';
import { createRawBullmq } from './support/raw-bullmq.ts';
import { writeResults } from './support/report.ts';
import { burstEnds, commitEvents, completedJobs, deliveryCounts, insertSubscription, stageBreakdown } from './support/webhook-pipeline.ts';
import { startBenchReceiver } from './support/webhook-receiver.ts';
import { formatWebhookReport } from './support/webhook-report.ts';

const N = 2000;
const WARMUP = 300;
const RATE = 500;
const LOW_RATE = 100; // a rate the path sustains on 2 cores: its latency without a backlog
const SECONDS = 10;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? DEFAULT_DELIVERY_CONCURRENCY); // raw BullMQ gets the deliveries' concurrency
const GOALS = { throughputRatio: 0.5, p99Ms: 100 };
const RESULTS_FILE = fileURLToPath(new URL('./results/webhooks.json', import.meta.url));

const progress = (line: string) => process.stderr.write(`[bench:webhooks] ${line}\n`);
const keysOf = (tag: string, first: number, count: number) => Array.from({ length: count }, (_, i) => `${tag}:${first + i}`);
const fixed = (n: number) => n.toFixed(1);
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');

async function main(): Promise<void> {
  const { cleanups, cleanup, loadBefore } = prepareRun(progress);
  try {
    const database = await createBenchDatabase();
    cleanups.push({ name: 'drop database', run: database.drop });
    const services = await startBenchServices(database, 'webhooks', { NODE_ENV: 'test', WEBHOOK_ALLOW_LOOPBACK: 'true' }, cleanups);
    const redis = services.redis!;
    const { redisPrefix } = services.config;
    const { config } = services;
    await services.db.migrate();
    const { siteId } = await seedEngineSite(services.db.orm, 'bench');
    const secret = randomBytes(24).toString('hex');
    const receiver = await startBenchReceiver(secret);
    cleanups.push({ name: 'stop receiver', run: () => receiver.close() });
    progress(`database ${database.name}, Redis prefix ${redisPrefix}, receiver :${receiver.port}`);
    await insertSubscription(services.db.orm, services.crypto, siteId, `https://127.0.0.1:${receiver.port}/hook`, secret);
    const orm = services.db.orm;
    const commits = new Map<string, number>();
    const emit = async (tag: string, first: number, count: number) => {
      const keys = keysOf(tag, first, count);
      const committed = await commitEvents(orm, siteId, keys);
      for (const key of keys) commits.set(key, committed);
    };
    const settle = async (expected: number) => {
      // Each delivery is recorded after the POST: wait for the records so the next phase starts on idle workers.
      const deadline = Date.now() + 30_000;
      while (((await deliveryCounts(orm, siteId)).succeeded ?? 0) < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    };

    // The relay alone, before any worker runs (so nothing else uses the event loop): its own rows/s. These N events
    // are then delivered as the warm-up of the webhook path.
    for (let i = 0; i < N; i += 100) await emit('relay', i, 100);
    const relayStarted = wallNow();
    const relayed = await services.outboxRelay.relayOnce();
    const relayOnly = { rows: relayed, perSecond: (relayed * 1000) / (wallNow() - relayStarted) };
    progress(`relay + fan-out alone (no workers): ${whole(relayOnly.perSecond)} rows/s; starting workers (warm-up: ${N} deliveries, ${WARMUP} raw jobs)`);
    const delivery = await startWebhookDelivery(services, { ca: receiver.cert, concurrency: CONCURRENCY });
    cleanups.push({ name: 'close webhook client', run: async () => delivery.close() });
    const raw = createRawBullmq(redis, redisPrefix, CONCURRENCY);
    cleanups.push({ name: 'close raw BullMQ', run: () => raw.close() });
    await receiver.waitFor('relay', N, 120_000);
    await settle(N);
    await raw.throughput('rawwarm', WARMUP);

    progress(`throughput: ${N} raw BullMQ jobs`);
    const rawCpuBefore = process.cpuUsage();
    const rawThroughput = await raw.throughput('rawtput', N);
    const rawCpu = process.cpuUsage(rawCpuBefore);
    // Adding and running each job: the same process's CPU as the webhook row below reports, for comparison.
    const rawCpuMsPerJob = (rawCpu.user + rawCpu.system) / 1000 / N;
    progress(`raw BullMQ: ${whole(rawThroughput.perSecond)} jobs/s; committing ${N} outbox rows`);
    for (let i = 0; i < N; i += 100) await emit('tput', i, 100);
    const profile = await startCpuProfile(process.env.BENCH_CPU_PROFILE);
    const cpuBefore = process.cpuUsage();
    const started = wallNow();
    services.outboxRelay.kick();
    await receiver.waitFor('tput', N, 120_000);
    const last = Math.max(...keysOf('tput', 0, N).map((key) => receiver.arrivals.get(key)!));
    const cpu = process.cpuUsage(cpuBefore);
    await profile.stop();
    if (process.env.BENCH_CPU_PROFILE) progress(`CPU profile of the throughput burst: ${process.env.BENCH_CPU_PROFILE}`);
    const hooks = {
      deliveries: N, seconds: (last - started) / 1000, perSecond: (N * 1000) / (last - started),
      // CPU of this process (relay, workers, BullMQ, pg client; not the receiver) per delivery, and the share of one core.
      cpuMsPerDelivery: (cpu.user + cpu.system) / 1000 / N, cpuShare: (cpu.user + cpu.system) / 1000 / (last - started),
    };
    await settle(2 * N);
    const burst = burstEnds(await completedJobs(redis, redisPrefix), keysOf('tput', 0, N), started);
    progress(`webhooks: ${whole(hooks.perSecond)} deliveries/s, ${fixed(hooks.cpuMsPerDelivery)} ms CPU each; ${JSON.stringify(burst)}`);

    progress(`latency: raw BullMQ at ${RATE}/s for ${SECONDS} s`);
    const rawLatency = await raw.latency('rawlat', RATE, SECONDS);
    progress(`raw BullMQ p99 ${rawLatency.latencyMs.p99} ms; webhooks at ${RATE}/s for ${SECONDS} s`);
    services.outboxRelay.start(); // as app/server.ts does: kicks carry the traffic, a 1 s poll catches the rest
    let delivered = 2 * N;
    const webhookLoop = async (tag: string, rate: number, seconds: number) => {
      const loop = await openLoop(rate, seconds, async (first, count) => {
        await emit(tag, first, count);
        services.outboxRelay.kick(); // as engine.onCommit does after a command
      });
      const keys = keysOf(tag, 0, loop.issued);
      // Over capacity on a busy machine the backlog can outlast the wait: the stragglers then count with the time
      // waited so far (a lower bound) instead of failing the run, and are reported as late.
      await receiver.waitFor(tag, loop.issued, 60_000).catch(() => undefined);
      const gaveUp = wallNow();
      const late = keys.filter((key) => !receiver.arrivals.has(key)).length;
      if (late > 0) progress(`${late} "${tag}" deliveries not arrived 60 s after the loop: counted as arriving then`);
      await receiver.waitFor(tag, loop.issued, 180_000);
      await settle((delivered += loop.issued));
      const latencyMs = percentiles(keys.map((key) => Math.min(receiver.arrivals.get(key)!, gaveUp) - commits.get(key)!));
      return { loop, keys, late, latencyMs };
    };
    const { loop, keys: latKeys, latencyMs: hookLatency } = await webhookLoop('lat', RATE, SECONDS);
    progress(`webhooks p99 ${hookLatency.p99} ms; again at ${LOW_RATE}/s for ${SECONDS / 2} s (below the path's capacity)`);
    const low = await webhookLoop('low', LOW_RATE, SECONDS / 2);
    const counts = await deliveryCounts(orm, siteId);
    const stages = stageBreakdown(await completedJobs(redis, redisPrefix), latKeys, commits, receiver.arrivals);
    if (receiver.badSignatures() > 0) throw new Error(`${receiver.badSignatures()} deliveries failed signature verification`);

    const ratio = hooks.perSecond / rawThroughput.perSecond;
    const report = formatWebhookReport([
      { target: 'raw BullMQ no-op: throughput', count: N, perSecond: rawThroughput.perSecond, ratio: 1 },
      { target: 'webhooks: throughput', count: N, perSecond: hooks.perSecond, ratio },
      { target: '(relay + fan-out alone, no workers)', count: relayOnly.rows, perSecond: relayOnly.perSecond, ratio: relayOnly.perSecond / rawThroughput.perSecond },
      { target: `raw BullMQ no-op: open loop ${RATE}/s`, count: rawLatency.loop.issued, perSecond: rawLatency.loop.ratePerSecond, latencyMs: rawLatency.latencyMs },
      { target: `webhooks: open loop ${RATE}/s`, count: loop.issued, perSecond: loop.ratePerSecond, latencyMs: hookLatency },
      { target: `webhooks: open loop ${LOW_RATE}/s`, count: low.loop.issued, perSecond: low.loop.ratePerSecond, latencyMs: low.latencyMs },
    ], `where the ${RATE}/s webhook latency goes`, stages);
    const setup = [
      machineLine(loadBefore),
      `NODE_ENV=test (WEBHOOK_ALLOW_LOOPBACK=true is refused in production); PostgreSQL as a non-superuser (RLS on), pool ${config.databasePoolSize}; BullMQ on local Redis`,
      `receiver: HTTPS on 127.0.0.1 in a child process, 204 after verifying the hex X-Webhook-Signature; 1 site, 1 subscription; ` +
        `delivery concurrency ${CONCURRENCY}, raw BullMQ concurrency ${CONCURRENCY}; warm-up: ${WARMUP} raw jobs, ${N} deliveries`,
      `latency: webhooks = receiver arrival − COMMIT returned; raw = processed − add() resolved; open loop on a 10 ms timer`,
    ];
    process.stdout.write(`\n${setup.join('\n')}\n\n${report}\n\n`);
    process.stdout.write(`throughput burst (s after the kick): relay added the last delivery job ${burst.relayAddedAllS}, ` +
      `last POST started ${burst.deliveriesStartedS}, last arrival ${fixed(hooks.seconds)}; main process CPU ${fixed(hooks.cpuMsPerDelivery)} ms/delivery (${Math.round(hooks.cpuShare * 100)}% of a core); raw BullMQ ${rawCpuMsPerJob.toFixed(2)} ms/job (add and run)\n`);
    process.stdout.write(`delivery records: ${JSON.stringify(counts)}; duplicate arrivals ${receiver.duplicates()}; raw jobs lost ${rawLatency.lost}\n`);
    process.stdout.write(`goal (throughput ≥ ${GOALS.throughputRatio}× raw BullMQ): ${verdict(ratio >= GOALS.throughputRatio)} (${ratio.toFixed(2)}×)\n`);
    process.stdout.write(`goal (p99 < ${GOALS.p99Ms} ms at ${RATE} events/s): ${verdict(hookLatency.p99 < GOALS.p99Ms)} (${fixed(hookLatency.p99)} ms)\n`);
    writeResults(RESULTS_FILE, {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      commit: gitCommit(),
      setup,
      goals: GOALS,
      throughput: { raw: { ...rawThroughput, cpuMsPerJob: rawCpuMsPerJob }, webhooks: { ...hooks, burst }, ratio, relayOnly },
      latency: { rate: RATE, seconds: SECONDS, raw: rawLatency, webhooks: { loop, latencyMs: hookLatency }, stages, lowRate: { rate: LOW_RATE, loop: low.loop, latencyMs: low.latencyMs } },
      deliveryRecords: counts,
      duplicates: receiver.duplicates(),
    });
    progress(`wrote ${RESULTS_FILE}`);
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench:webhooks] FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
