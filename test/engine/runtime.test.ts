import { describe, expect, it } from 'vitest';
import { buildEntityMachine } from '../../machines/entity-machine.ts';
import { DEFAULT_WORKFLOWS } from '../../machines/default-workflows.ts';
import { initialSnapshot } from '../../machines/entity-snapshot.ts';
import { ActorRegistry } from '../../engine/runtime/actor-registry.ts';
import { Mailbox } from '../../engine/runtime/mailbox.ts';

const workflow = {
  id: 'wfl_runtime',
  entityType: 'job' as const,
  version: 1,
  states: DEFAULT_WORKFLOWS.job.states.map((s) => ({ ...s, id: `wfs_${s.key}` })),
  transitions: DEFAULT_WORKFLOWS.job.transitions,
};
const snapshot = initialSnapshot(buildEntityMachine(workflow));
const entry = (at: number) => ({ snapshot, version: 1, workflowId: workflow.id, lastUsedAt: at });

describe('actor registry', () => {
  it('holds at most maxActors, dropping the least recently used', () => {
    const registry = new ActorRegistry({ maxActors: 3, idleMs: 60_000 });
    for (const id of ['a', 'b', 'c']) registry.set('site', id, entry(0));
    registry.get('site', 'a', 1);
    registry.set('site', 'd', entry(2));
    expect(registry.size).toBe(3);
    expect(registry.get('site', 'b', 3)).toBeUndefined();
    expect(registry.get('site', 'a', 3)).toBeDefined();
  });

  it('evicts actors idle past idleMs and keeps sites apart', () => {
    const registry = new ActorRegistry({ maxActors: 100, idleMs: 1000 });
    registry.set('s1', 'old', entry(0));
    registry.set('s1', 'fresh', entry(5000));
    registry.set('s2', 'fresh', entry(5000));
    expect(registry.sweep(5500)).toBe(1);
    expect(registry.get('s1', 'old', 5500)).toBeUndefined();
    expect(registry.get('s2', 'old', 5500)).toBeUndefined();
    expect(registry.size).toBe(2);
  });
});

describe('mailbox', () => {
  it('runs work for one key in arrival order, one at a time, even when some fail', async () => {
    const mailbox = new Mailbox();
    const log: string[] = [];
    const slow = (name: string, ms: number, fail = false) => async () => {
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`end ${name}`);
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([mailbox.run('k', slow('1', 20)), mailbox.run('k', slow('2', 1, true)), mailbox.run('k', slow('3', 5))]);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(mailbox.busy).toBe(0);
  });

  it('runs different keys concurrently', async () => {
    const mailbox = new Mailbox();
    const log: string[] = [];
    await Promise.all([
      mailbox.run('a', async () => { log.push('a1'); await new Promise((r) => setTimeout(r, 20)); log.push('a2'); }),
      mailbox.run('b', async () => { log.push('b1'); }),
    ]);
    expect(log).toEqual(['a1', 'b1', 'a2']);
  });
});
