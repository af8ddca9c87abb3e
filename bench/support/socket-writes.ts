import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';

type Counts = { writes: number; writeMs: number; voluntarySwitches: number; involuntarySwitches: number };

/**
 * Times every socket write of this process (on the simulator's day: the statements sent to PostgreSQL over its Unix
 * socket) and counts the main thread's context switches from `/proc/self/status`. V8's CPU profile of the day puts
 * 31% of its samples in `writeBuffer`, but a sample only says where the thread was: a write that wakes a backend
 * the kernel then runs on this core leaves Node off the CPU until it is scheduled again (an involuntary switch),
 * and that wait shows as the write. Comparing the writes' time with `process.cpuUsage()`'s system time and the
 * involuntary switches tells the waiting from the kernel's work.
 */
export function countSocketWrites(): { since(): Counts } {
  const write = Socket.prototype.write;
  const counts = { writes: 0, writeNs: 0n };
  Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
    const started = process.hrtime.bigint();
    try {
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } finally {
      counts.writes += 1;
      counts.writeNs += process.hrtime.bigint() - started;
    }
  } as typeof write;
  const before = switches();
  return {
    since() {
      const now = switches();
      return { writes: counts.writes, writeMs: Number(counts.writeNs) / 1e6, voluntarySwitches: now.voluntary - before.voluntary, involuntarySwitches: now.involuntary - before.involuntary };
    },
  };
}

function switches(): { voluntary: number; involuntary: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { voluntary: field('voluntary_ctxt_switches'), involuntary: field('nonvoluntary_ctxt_switches') };
}
