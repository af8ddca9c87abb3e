import { readdirSync, writeFileSync, writeSync } from 'node:fs';
import { PerformanceObserver, performance, type PerformanceEntry } from 'node:perf_hooks';
import { schedstatOf } from './schedstat.ts';

/** A thread of this process, by its id (0 once it has exited). */
const schedOf = (tid: string) => schedstatOf(`/proc/self/task/${tid}/schedstat`);

type Threads = Map<string, number>;

/** CPU ns of every thread of this process (the main thread's id is the process id; the others are V8's platform workers: the optimizing compiler and GC helpers, and libuv's pool). */
function threadCpu(): Threads {
  const threads: Threads = new Map();
  for (const tid of readdirSync('/proc/self/task')) threads.set(tid, schedOf(tid).cpu);
  return threads;
}

/** One operation: its window in `performance.now()` ms, wall, the main thread's CPU and run-queue wait, and every other thread's CPU (ms). */
export type TracedOperation = { index: number; startMs: number; wallMs: number; mainCpuMs: number; mainWaitMs: number; otherThreadsCpuMs: number };
/** A garbage collection seen by `perf_hooks`: its kind (1 minor, 2 major, 4 incremental, 8 weak callbacks) and window. */
export type TracedGc = { kind: number; startMs: number; durationMs: number };

/**
 * A diagnostic for a series of operations (`BENCH_DISPATCH_TRACE`): records each one's CPU split between the Node
 * main thread and the process's other threads, with the garbage collections, in `performance.now()` time, so a slow
 * operation can be laid beside what else ran in the process meanwhile (a perf recording of the same series is
 * taken on CLOCK_MONOTONIC; `origin` maps one onto the other). Reads /proc twice per thread per operation.
 */
export function startDispatchTrace(file: string | undefined): { around<T>(index: number, operation: () => Promise<T>): Promise<T>; stop(): Promise<void> } {
  if (!file) return { around: (_index, operation) => operation(), stop: async () => undefined };
  const operations: TracedOperation[] = [];
  const gcs: TracedGc[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
      gcs.push({ kind, startMs: entry.startTime, durationMs: entry.duration });
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const mainTid = String(process.pid);
  // performance.now() and CLOCK_MONOTONIC (process.hrtime) at one instant: perf's `-k mono` timestamps map through it.
  const origin = { performanceMs: performance.now(), monotonicNs: process.hrtime.bigint().toString() };
  // With BENCH_DISPATCH_TRACE_MARKS=1, a line `@@ dispatch <index> start|end` on stdout around each operation, so
  // V8's own traces there (`--trace-opt --trace-deopt`, written unbuffered) fall between the dispatches they met.
  const mark = process.env.BENCH_DISPATCH_TRACE_MARKS === '1' ? (line: string) => writeSync(1, `@@ dispatch ${line}\n`) : () => undefined;
  return {
    async around(index, operation) {
      const before = threadCpu();
      const mainBefore = schedOf(mainTid);
      mark(`${index} start`);
      const startMs = performance.now();
      try {
        return await operation();
      } finally {
        const wallMs = performance.now() - startMs;
        const mainAfter = schedOf(mainTid);
        const after = threadCpu();
        let others = 0;
        for (const [tid, cpu] of after) if (tid !== mainTid) others += cpu - (before.get(tid) ?? 0);
        mark(`${index} end`);
        operations.push({ index, startMs, wallMs, mainCpuMs: (mainAfter.cpu - mainBefore.cpu) / 1e6, mainWaitMs: (mainAfter.wait - mainBefore.wait) / 1e6, otherThreadsCpuMs: others / 1e6 });
      }
    },
    async stop() {
      await new Promise((resolve) => setImmediate(resolve));
      observer.disconnect();
      writeFileSync(file, JSON.stringify({ origin, operations, gcs }));
    },
  };
}
