import { getHeapSpaceStatistics } from 'node:v8';

/** Young-generation fill from which an idle moment is used for a scavenge (the rest is headroom for the next request). */
const DEFAULT_MIN_FILL = 0.9;

type MinorGc = (options: { type: 'minor' }) => void;

export type IdleScavenger = {
  /** A request (or command) began: no scavenge is started while one is in flight. */
  started(): void;
  /** It ended: once nothing is in flight, the next turn of the event loop scavenges if the young generation is full enough. */
  finished(): void;
  /** Scavenges now if nothing is in flight and the young generation is full enough (what `finished` schedules). */
  collectIfIdle(): void;
  /** Scavenges run in idle moments so far. */
  readonly count: number;
};

/**
 * Runs V8's young-generation collection (a scavenge) when the process is idle rather than when allocation forces it.
 * Why: a forced scavenge lands inside whatever request is allocating, and on a 2-core machine it paused that request
 * for 7–20 ms (0.6 per 100 1k dispatches, the slowest of each series: README, Dispatch → "Sixth round"); between
 * requests the same work delays nobody, and copies only what outlives the requests (their own objects are dead).
 * It needs the collector exposed (`node --expose-gc`, as `npm start` runs); without it, it does nothing.
 * @param minFill young-generation fill (0–1) from which an idle scavenge runs; lower means more, smaller scavenges
 */
export function idleScavenger(minFill = DEFAULT_MIN_FILL, gc: MinorGc | undefined = exposedGc()): IdleScavenger {
  let inFlight = 0;
  let scheduled = false;
  let count = 0;
  const collectIfIdle = () => {
    if (inFlight > 0 || !gc || youngFill() < minFill) return;
    gc({ type: 'minor' });
    count += 1;
  };
  const scavengeIfIdle = () => {
    scheduled = false;
    collectIfIdle();
  };
  return {
    started() {
      inFlight += 1;
    },
    finished() {
      inFlight -= 1;
      if (inFlight > 0 || scheduled || !gc) return;
      // After the response's own callbacks and any I/O already waiting: a request that arrived meanwhile goes first.
      scheduled = true;
      setImmediate(scavengeIfIdle);
    },
    collectIfIdle,
    get count() {
      return count;
    },
  };
}

/** How full the young generation's allocation space is (0–1). */
export function youngFill(): number {
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name !== 'new_space') continue;
    const capacity = space.space_used_size + space.space_available_size;
    return capacity > 0 ? space.space_used_size / capacity : 0;
  }
  return 0;
}

function exposedGc(): MinorGc | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as MinorGc) : undefined;
}
