import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** `scavengesInside`: those that began inside one of the windows given to `stop` (the timed operations), the rest ran between them. */
export type GcFigures = { scavenges: number; scavengesInside: number; scavengeMs: number; scavengeMaxMs: number; majors: number };

/** A measured operation's span on `performance.now()`'s clock (a GC entry's `startTime` is on the same clock). */
export type Window = { start: number; end: number };

/**
 * The garbage collections of a measured window: scavenges (young-generation pauses, which land whole on the
 * operation they interrupt) and major collections. Per operation, a figure that does not depend on how busy the
 * machine is, unlike the latency it explains.
 */
export function countGc(): { stop(windows?: Window[]): Promise<GcFigures> } {
  const figures: GcFigures = { scavenges: 0, scavengesInside: 0, scavengeMs: 0, scavengeMaxMs: 0, majors: 0 };
  const scavengeStarts: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        figures.scavenges += 1;
        scavengeStarts.push(entry.startTime);
        figures.scavengeMs += entry.duration;
        figures.scavengeMaxMs = Math.max(figures.scavengeMaxMs, entry.duration);
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) figures.majors += 1;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop(windows = []) {
      // Entries are delivered asynchronously: let the last ones in before reading.
      await new Promise((resolve) => setImmediate(resolve));
      observer.disconnect();
      figures.scavengesInside = scavengeStarts.filter((start) => windows.some((w) => start >= w.start && start <= w.end)).length;
      return figures;
    },
  };
}
