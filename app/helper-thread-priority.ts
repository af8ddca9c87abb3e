import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The lowest CPU priority Linux gives a thread (`nice` 19): it runs when the threads at the default priority leave a core free. */
const BACKGROUND_NICE = 19;

/**
 * Lowers the CPU priority of every thread this process has besides the main one, when called before the
 * application's own code runs: those are V8's platform workers (the optimizing compiler's background jobs, and the
 * garbage collector's concurrent and parallel helpers) and Node's delayed-task scheduler. Threads created later
 * (libuv's pool, worker threads) keep the default priority, since they inherit it from the main thread.
 *
 * Why: on a small machine TurboFan's compile jobs (3–25 ms of CPU each, dozens per thousand requests while code
 * warms up or is re-optimized) otherwise take a core from the main thread in the middle of a request, which then
 * waits in the run queue: the 1k dispatch's slowest 10% met 3 ms of such compiling on average (README, Dispatch →
 * "Sixth round of 2026-11-27"). At nice 19 a compile job runs in the cores' idle moments instead and finishes a few
 * milliseconds later; nothing waits for it, the interpreter or baseline code keeps running meanwhile. Linux lets
 * any process lower its own threads' priority (it cannot raise it back without privileges). Elsewhere, or when
 * /proc is not readable, it does nothing. Returns how many threads it lowered.
 */
export function lowerHelperThreadPriority(): number {
  if (process.platform !== 'linux') return 0;
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  let lowered = 0;
  for (const tid of tids) {
    if (Number(tid) === process.pid) continue;
    try {
      setPriority(Number(tid), BACKGROUND_NICE);
      lowered += 1;
    } catch {
      // The thread has exited meanwhile.
    }
  }
  return lowered;
}
