import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export type GcFigures = { scavenges: number; scavengeMs: number; scavengeMaxMs: number; majors: number };

/**
 * The garbage collections of a measured window: scavenges (young-generation pauses, which land whole on the
 * operation they interrupt) and major collections. Per operation, a figure that does not depend on how busy the
 * machine is, unlike the latency it explains.
 */
export function countGc(): { stop(): Promise<GcFigures> } {
  const figures: GcFigures = { scavenges: 0, scavengeMs: 0, scavengeMaxMs: 0, majors: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        figures.scavenges += 1;
        figures.scavengeMs += entry.duration;
        figures.scavengeMaxMs = Math.max(figures.scavengeMaxMs, entry.duration);
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) figures.majors += 1;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      // Entries are delivered asynchronously: let the last ones in before reading.
      await new Promise((resolve) => setImmediate(resolve));
      observer.disconnect();
      return figures;
    },
  };
}
