import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

export type LoopFigures = { loopP99Ms: number; loopMaxMs: number; gcMs: number; gcMaxMs: number };

/**
 * What kept this process's event loop from answering during a phase: the loop's delay (p99 and worst, sampled every
 * 10 ms) and the garbage collector's pauses (total and longest). Both land directly on acknowledgement latency, so a
 * p99 read beside them says whether the tail came from the work itself or from pauses.
 */
export function watchLoop(): { stop(): LoopFigures } {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let gcMs = 0;
  let gcMaxMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      gcMaxMs = Math.max(gcMaxMs, entry.duration);
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  delay.enable();
  return {
    stop() {
      delay.disable();
      gc.disconnect();
      return { loopP99Ms: delay.percentile(99) / 1e6, loopMaxMs: delay.max / 1e6, gcMs, gcMaxMs };
    },
  };
}
