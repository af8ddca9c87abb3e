import { describe, expect, it } from 'vitest';
import { idleScavenger, youngFill } from '../../app/idle-scavenge.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('idleScavenger', () => {
  it('scavenges once the last request in flight has ended, not while one is', async () => {
    const calls: unknown[] = [];
    const scavenger = idleScavenger(0, (options) => calls.push(options));
    scavenger.started();
    scavenger.started();
    scavenger.finished();
    await nextTurn();
    expect(calls).toEqual([]);
    scavenger.finished();
    await nextTurn();
    expect(calls).toEqual([{ type: 'minor' }]);
    expect(scavenger.count).toBe(1);
  });

  it('leaves the idle moment alone when a request arrives before it', async () => {
    const calls: unknown[] = [];
    const scavenger = idleScavenger(0, (options) => calls.push(options));
    scavenger.started();
    scavenger.finished();
    scavenger.started();
    await nextTurn();
    expect(calls).toEqual([]);
  });

  it('does not scavenge a young generation below the fill it was given', async () => {
    const calls: unknown[] = [];
    const scavenger = idleScavenger(1.01, (options) => calls.push(options));
    scavenger.started();
    scavenger.finished();
    await nextTurn();
    expect(calls).toEqual([]);
  });

  it('collects at once when asked between requests, and not during one', () => {
    const calls: unknown[] = [];
    const scavenger = idleScavenger(0, (options) => calls.push(options));
    scavenger.started();
    scavenger.collectIfIdle();
    expect(calls).toEqual([]);
    scavenger.finished();
    scavenger.collectIfIdle();
    expect(calls).toEqual([{ type: 'minor' }]);
  });

  it('does nothing without an exposed collector', async () => {
    const scavenger = idleScavenger(0, undefined);
    scavenger.started();
    scavenger.finished();
    await nextTurn();
    expect(scavenger.count).toBe(0);
  });

  it('reads the young generation fill as a fraction', () => {
    const fill = youngFill();
    expect(fill).toBeGreaterThan(0);
    expect(fill).toBeLessThanOrEqual(1);
  });
});
