import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** The commit measured, marked `+dirty` when the tree has changes (a result is only as good as its source). */
export function gitCommit(): string | null {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}+dirty` : head;
  } catch {
    return null;
  }
}

/** One line naming the machine: with 2 cores, the load average says whether a run can be trusted. */
export function machineLine(loadBefore: number): string {
  return `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), commit ${gitCommit() ?? 'unknown'}, ` +
    `load average ${loadBefore.toFixed(2)} before / ${os.loadavg()[0]!.toFixed(2)} after`;
}
