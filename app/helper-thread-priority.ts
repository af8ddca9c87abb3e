import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The lowest CPU priority Linux gives a thread (`nice` 19): it runs when the threads at the default priority leave a core free. */
const BACKGROUND_NICE = 19;

/**
 * Lowers the CPU priority of every thread this process has besides the main one, when called before the
 * application's own code runs: those are V8's platform workers (the optimizing compiler's background jobs, and the
 * garbage collector's concurrent and parallel helpers), Node's delayed-task scheduler, and libuv's pool if module
 * loading already started it (its work, file reads and DNS lookups, waits on I/O rather than a core). Threads created
 * later (worker threads such as the route optimizer's) keep the default priority: they inherit the main thread's.
 *
 * Why: on a small machine TurboFan's compile jobs (3–25 ms of CPU each, 20–60 per thousand requests for the first
 * thousands of requests, and after a deoptimization) otherwise take a core from the main thread in the middle of a
 * request, which then waits in the run queue: the 1k dispatches over 5 ms (8% of a series) met 3.1 ms of compiling
 * on average, the others 0.2 ms (README, Dispatch → "Sixth round of 2026-11-27"). At nice 19 a compile job runs in
 * the main thread's idle moments instead and finishes a little later; nothing waits for it. It does not keep a
 * compile job from another process's core (PostgreSQL's backend): Linux weighs nice only between the threads of one
 * session (autogroup). Linux lets any process lower its own threads' priority (it cannot raise it back without
 * privileges). Elsewhere, or when /proc is not readable, it does nothing. Returns how many threads it lowered.
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
