import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long `perf` takes to attach to a running process before it samples (measured: well under a second). */
const ATTACH_MS = 1000;

/**
 * With a file, records this process with Linux `perf` (`cpu-clock` at 2 kHz, call graphs) until `stop`: every thread
 * (the main one, GC helpers, the optimizing compiler) and the kernel's share (socket writes, page faults), at a small
 * fraction of the V8 profiler's overhead. Read it with `perf report -i <file>`; JavaScript frames have names when
 * Node runs with `--perf-basic-prof`. Without a file both are no-ops.
 */
export async function startPerfRecord(file: string | undefined): Promise<{ stop(): Promise<void> }> {
  if (!file) return { stop: async () => undefined };
  const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '2000', '-g', '-k', 'mono', '-o', file, '-p', String(process.pid)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = once(perf, 'exit');
  await sleep(ATTACH_MS);
  return {
    async stop() {
      perf.kill('SIGINT');
      await exited;
    },
  };
}
