import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

type ProfileNode = { selfSize: number; children: ProfileNode[] };

/**
 * With `file` set, V8's sampling heap profiler over a window, counting the objects minor and major GCs collected
 * too (what a window allocates, not what it keeps); `stop` writes the profile (Chrome DevTools opens it) and returns
 * the bytes sampled, V8's estimate of everything allocated. Without a file both are no-ops (null).
 */
export async function startHeapProfile(file: string | undefined): Promise<{ stop(): Promise<number | null> }> {
  if (!file) return { stop: async () => null };
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  return {
    async stop() {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      return totalSize(profile.head as ProfileNode);
    },
  };
}

function totalSize(node: ProfileNode): number {
  let total = node.selfSize;
  for (const child of node.children) total += totalSize(child);
  return total;
}
