import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * Starts the V8 CPU profiler of this process when `file` is set; `stop` writes the profile there (open it in Chrome
 * DevTools or speedscope). Without a file both are no-ops. The one profiler start every bench uses.
 */
export async function startCpuProfile(file: string | undefined): Promise<{ stop(): Promise<void> }> {
  if (!file) return { stop: async () => undefined };
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * With BENCH_CPU_PROFILE=<prefix>, `work` runs under the profiler and the profile is written to
 * `<prefix>-<label>.cpuprofile`; without it, `work` just runs. The dispatch and realtime benches: one per series.
 */
export async function profiled<T>(label: string, work: () => Promise<T>, progress: (line: string) => void): Promise<T> {
  const prefix = process.env.BENCH_CPU_PROFILE;
  const file = prefix ? `${prefix}-${label}.cpuprofile` : undefined;
  const profiler = await startCpuProfile(file);
  try {
    return await work();
  } finally {
    await profiler.stop();
    if (file) progress(`wrote CPU profile ${file}`);
  }
}
