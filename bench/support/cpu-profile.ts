import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * With BENCH_CPU_PROFILE=<prefix>, `work` runs under the V8 CPU profiler and the profile is written to
 * `<prefix>-<label>.cpuprofile` (open it in Chrome DevTools or speedscope). Without it, `work` just runs. Used by the
 * dispatch and realtime benches (one profile per series).
 */
export async function profiled<T>(label: string, work: () => Promise<T>, progress: (line: string) => void): Promise<T> {
  const prefix = process.env.BENCH_CPU_PROFILE;
  if (!prefix) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    const file = `${prefix}-${label}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    progress(`wrote CPU profile ${file}`);
  }
}
