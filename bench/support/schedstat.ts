import { readFileSync } from 'node:fs';

/** A process's or thread's time on a CPU and waiting for one (run-queue wait), in ns. */
export type Sched = { cpu: number; wait: number };

/**
 * Reads a `/proc/<pid>/schedstat` or `/proc/<pid>/task/<tid>/schedstat` file (ns resolution, Linux): zeros once the
 * process or thread has exited, so a figure taken across its exit counts only what it ran.
 */
export function schedstatOf(path: string): Sched {
  try {
    const [cpu, wait] = readFileSync(path, 'utf8').split(' ');
    return { cpu: Number(cpu), wait: Number(wait) };
  } catch {
    return { cpu: 0, wait: 0 };
  }
}
