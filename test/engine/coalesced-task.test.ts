import { describe, expect, it } from 'vitest';
import { createCoalescedTask } from '../../engine/queue/coalesced-task.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createCoalescedTask', () => {
  it('starts a pass no sooner than minGapMs after the previous one, however often it is triggered', async () => {
    const starts: number[] = [];
    const task = createCoalescedTask(async () => {
      starts.push(Date.now());
    }, () => undefined, 40);
    // A trigger every 5 ms for 200 ms: one pass per gap, not one per trigger.
    for (let i = 0; i < 40; i++) {
      task.trigger();
      await sleep(5);
    }
    await task.stop();
    expect(starts.length).toBeGreaterThanOrEqual(3);
    expect(starts.length).toBeLessThanOrEqual(7);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(39);
  });

  it('runs a pass at once when the last one started longer ago than the gap, and loses no trigger', async () => {
    let passes = 0;
    const task = createCoalescedTask(async () => {
      passes++;
    }, () => undefined, 20);
    task.trigger();
    await sleep(50);
    const before = Date.now();
    task.trigger();
    await sleep(5);
    expect(passes).toBe(2);
    expect(Date.now() - before).toBeLessThan(20);
    await task.stop();
  });
});
