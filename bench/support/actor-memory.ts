import { performance } from 'node:perf_hooks';
import { ActorRegistry } from '../../engine/runtime/actor-registry.ts';
import { DEFAULT_WORKFLOWS } from '../../machines/default-workflows.ts';
import { buildEntityMachine, type EntityEvent, type EntityMachine, type EntitySnapshot } from '../../machines/entity-machine.ts';
import { applyEvent, initialSnapshot, restoreSnapshot } from '../../machines/entity-snapshot.ts';
import type { Workflow } from '../../machines/workflow.schema.ts';
import { newId } from '../../persistence/ids.ts';

/** How the cached snapshot was made: the engine caches `initialSnapshot` after a create and `applyEvent`'s result after a move. */
export type SnapshotSource = 'after create' | 'after a move';

export type MemoryResult = { source: SnapshotSource; actors: number; heapBytes: number; bytesPerActor: number; actorsPerGiB: number };
export type RateResult = { operation: string; count: number; seconds: number; perSecond: number };

const GIB = 1024 ** 3;
/** Persisted states a live job can be in (terminal ones are never moved again, so never cached for long). */
const OPEN_STATES = ['created', 'dispatched', 'accepted', 'in_progress'];
const FACTS = { hasCancellationNotes: false, hasAttachment: false };
/** One move out of each open state, allowed for a dispatcher, so every cached snapshot is a real `applyEvent` result. */
const MOVE_FROM: Record<string, EntityEvent> = {
  created: { type: 'job.dispatch', role: 'dispatcher', facts: FACTS },
  dispatched: { type: 'job.accept', role: 'dispatcher', facts: FACTS },
  accepted: { type: 'job.start', role: 'dispatcher', facts: FACTS },
  in_progress: { type: 'job.complete', role: 'dispatcher', facts: FACTS },
};

/** The site's default job workflow as the database holds it: states with ids, version 1. */
export function defaultJobWorkflow(): Workflow {
  const definition = DEFAULT_WORKFLOWS.job;
  return {
    id: newId('workflow'),
    entityType: 'job',
    version: 1,
    states: definition.states.map((state) => ({ ...state, id: newId('workflowState') })),
    transitions: definition.transitions,
  };
}

function collect(): number {
  // Twice: the first pass can leave weak/finalizable objects that only the second frees.
  globalThis.gc!();
  globalThis.gc!();
  return process.memoryUsage().heapUsed;
}

function snapshotFor(machine: EntityMachine, source: SnapshotSource, i: number): EntitySnapshot {
  if (source === 'after create') return initialSnapshot(machine);
  const from = OPEN_STATES[i % OPEN_STATES.length]!;
  const next = applyEvent(machine, restoreSnapshot(machine, { value: from }), MOVE_FROM[from]!);
  if (!next) throw new Error(`the default job workflow refused ${MOVE_FROM[from]!.type} from ${from}`);
  return next;
}

/**
 * Heap held by `count` idle actors in an ActorRegistry, filled through its own `set` with the entry the engine
 * stores (snapshot, version, workflow id, last use) under `<site>:<entity>` keys built from real prefixed ULIDs.
 * Measured as heapUsed after a full GC with the registry alive, minus heapUsed after a full GC before it existed:
 * so it counts the keys, entries, snapshots and the Map's own table, and nothing shared (machine, workflow).
 */
export function measureIdleActors(workflow: Workflow, source: SnapshotSource, count: number): MemoryResult {
  if (typeof globalThis.gc !== 'function') throw new Error('run node with --expose-gc (see the bench:engine script)');
  const machine = buildEntityMachine(workflow);
  const siteId = newId('site');
  const before = collect();
  const registry = new ActorRegistry({ maxActors: count * 2, idleMs: 60 * 60_000 });
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    registry.set(siteId, newId('job'), { snapshot: snapshotFor(machine, source, i), version: 1 + (i % 5), workflowId: workflow.id, lastUsedAt: now });
  }
  const after = collect();
  if (registry.size !== count) throw new Error(`registry holds ${registry.size} actors, expected ${count}`);
  const heapBytes = after - before;
  const bytesPerActor = heapBytes / count;
  return { source, actors: count, heapBytes, bytesPerActor, actorsPerGiB: GIB / bytesPerActor };
}

/** Runs `step(i)` in batches until `seconds` have passed; the checksum keeps the JIT from dropping the work. */
function rate(operation: string, seconds: number, step: (i: number) => number): RateResult {
  const batch = 5_000;
  let count = 0;
  let checksum = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < batch; i++) checksum += step(count + i);
    count += batch;
  }
  const elapsed = (performance.now() - start) / 1000;
  if (checksum === 0) throw new Error(`${operation} produced nothing`);
  return { operation, count, seconds: elapsed, perSecond: count / elapsed };
}

/**
 * Rehydration as the engine does it on a cache miss: `restoreSnapshot` from the persisted `{value}` (states
 * cycled), then, as a bonus, `applyEvent` (the `can()` check plus XState's pure transition) on restored snapshots.
 */
export function measureRates(workflow: Workflow, seconds: number): RateResult[] {
  const machine = buildEntityMachine(workflow);
  const persisted = OPEN_STATES.map((value) => ({ value }));
  const restored = OPEN_STATES.map((value) => restoreSnapshot(machine, { value }));
  const events = OPEN_STATES.map((value) => MOVE_FROM[value]!);
  const open = OPEN_STATES.length;
  const warm = (i: number) => restoreSnapshot(machine, persisted[i % open]!).tags.size;
  rate('warm-up', Math.min(1, seconds), warm);
  return [
    rate('restoreSnapshot({value})', seconds, warm),
    rate('applyEvent (can + transition)', seconds, (i) => (applyEvent(machine, restored[i % open]!, events[i % open]!) ? 1 : 0)),
    rate('restore + applyEvent (cache miss)', seconds, (i) => (applyEvent(machine, restoreSnapshot(machine, persisted[i % open]!), events[i % open]!) ? 1 : 0)),
  ];
}
