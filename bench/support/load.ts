import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { probe } from './probe.ts';

/** The same load shape for every target, so the ratios compare servers, not settings. */
export type LoadSettings = { connections: number; pipelining: number; warmupSeconds: number; durationSeconds: number };

/** What one server is asked: the path and the headers (Host picks the tenant) of its single request. */
export type Target = { name: string; port: number; path: string; headers: Record<string, string> };

export type Measurement = {
  target: string;
  path: string;
  requestsPerSecond: { mean: number; stddev: number; min: number; max: number };
  latencyMs: { mean: number; p50: number; p99: number; max: number };
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
};

type Reply = { ok: true; result: autocannon.Result } | { ok: false; error: string };

/** The load generator's process; `serialization: 'advanced'` keeps the result's Dates and numbers intact. */
function startLoadProcess(): ChildProcess {
  return fork(fileURLToPath(new URL('./load-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** One long-lived child process running autocannon, one run at a time. */
export class LoadGenerator {
  private readonly child = startLoadProcess();

  constructor(private readonly settings: LoadSettings) {}

  private run(options: autocannon.Options): Promise<autocannon.Result> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the load process exited (code ${code}) mid-run`));
      this.child.once('exit', onExit);
      this.child.once('message', (reply: Reply) => {
        this.child.off('exit', onExit);
        if (reply.ok) resolve(reply.result);
        else reject(new Error(`autocannon failed: ${reply.error}`));
      });
      this.child.send(options);
    });
  }

  /**
   * A discarded warm-up run (JIT, connection pools, caches) then the measured run. autocannon stops by dropping its
   * connections, but requests already queued in the server (waiting for a database connection) still run; a probe
   * after each run queues behind them, so the next run starts on an idle server and shutdown aborts nothing.
   * @throws when any measured response is not a 2xx or any connection failed: a benchmark of errors is worthless
   */
  async measure(target: Target, progress: (line: string) => void): Promise<Measurement> {
    const options = {
      // Connect to the loopback address; the Host header (not the URL) names the tenant.
      url: `http://127.0.0.1:${target.port}${target.path}`,
      headers: target.headers,
      connections: this.settings.connections,
      pipelining: this.settings.pipelining,
    };
    progress(`${target.name}: warm-up ${this.settings.warmupSeconds} s`);
    const warmup = await this.run({ ...options, duration: this.settings.warmupSeconds });
    assertAllSucceeded(target, warmup, 'warm-up');
    await probe(target);
    progress(`${target.name}: measuring ${this.settings.durationSeconds} s`);
    const result = await this.run({ ...options, duration: this.settings.durationSeconds });
    assertAllSucceeded(target, result, 'measured run');
    await probe(target);
    const measurement: Measurement = {
      target: target.name,
      path: target.path,
      requestsPerSecond: { mean: result.requests.mean, stddev: result.requests.stddev, min: result.requests.min, max: result.requests.max },
      latencyMs: { mean: result.latency.mean, p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      requests: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
    };
    progress(`${target.name}: ${Math.round(measurement.requestsPerSecond.mean)} req/s, p99 ${measurement.latencyMs.p99} ms`);
    return measurement;
  }

  /** Closes the IPC channel, which the child takes as its cue to exit; resolves once it has. */
  close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.disconnect();
    });
  }
}

function assertAllSucceeded(target: Target, result: autocannon.Result, phase: string): void {
  const bad = result.non2xx + result.errors + result.timeouts + result.mismatches;
  if (result.requests.total > 0 && bad === 0) return;
  const codes = JSON.stringify(result.statusCodeStats ?? {});
  throw new Error(
    `${target.name} ${phase}: ${result.requests.total} responses, ${result.non2xx} non-2xx (status codes ${codes}), ` +
      `${result.errors} errors, ${result.timeouts} timeouts, ${result.mismatches} mismatches`,
  );
}
