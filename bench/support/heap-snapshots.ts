import { setTimeout as sleep } from 'node:timers/promises';
import { writeHeapSnapshot } from 'node:v8';

/**
 * Two heap snapshots `gapMs` apart, `delayMs` into a measured phase (`<prefix>-a.heapsnapshot`, `-b`). Snapshot ids
 * are kept across snapshots, so the objects of b with ids above a's were allocated between the two and were still
 * alive at b (each snapshot runs a full GC first): per-connection state that each message replaces shows up there.
 */
export async function snapshotPair(prefix: string, delayMs: number, gapMs: number, progress: (line: string) => void): Promise<void> {
  await sleep(delayMs);
  writeHeapSnapshot(`${prefix}-a.heapsnapshot`);
  await sleep(gapMs);
  writeHeapSnapshot(`${prefix}-b.heapsnapshot`);
  progress(`wrote heap snapshots ${prefix}-a/-b`);
}
