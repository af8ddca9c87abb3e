import { describe, expect, it } from 'vitest';
import { createCoalescedTask } from '../../engine/queue/coalesced-task.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createCoalescedTask', () => {
  it('starts a pass no sooner than minGapMs after the previous one, however often it is triggered', async () => {
    const starts: number[] = [];
    const task = createCoalescedTask(async () => {
      starts.push(Date.now());
    }, () => undefined, 40);
    // A trigger every 5 ms for 200 ms (longer on a busy machine): one pass per gap, not one per trigger.
    const began = Date.now();
    for (let i = 0; i < 40; i++) {
      task.trigger();
      await sleep(5);
    }
    const elapsed = Date.now() - began;
    await task.stop();
    expect(starts.length).toBeGreaterThanOrEqual(3);
    expect(starts.length).toBeLessThanOrEqual(Math.floor(elapsed / 40) + 1);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(39);
  });

  it('runs a pass at once when the last one started longer ago than the gap, and loses no trigger', async () => {
    let passes = 0;
    const task = createCoalescedTask(async () => {
      passes++;
    }, () => undefined, 20);
    task.trigger();
    await sleep(50);
    task.trigger();
    // On the next macrotask, not after a timer: the pass was scheduled before this immediate.
    await new Promise((resolve) => setImmediate(resolve));
    expect(passes).toBe(2);
    await task.stop();
  });
});
