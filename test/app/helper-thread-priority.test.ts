import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lowerHelperThreadPriority } from '../../app/helper-thread-priority.ts';

/** A thread's nice value, from field 19 of `/proc/self/task/<tid>/stat` (counted after the command name's closing parenthesis). */
function niceOf(tid: string): number {
  const afterName = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!;
  return Number(afterName.split(' ')[16]);
}

// Linux only, as the project's CI and servers are: the function does nothing elsewhere.
describe('lowerHelperThreadPriority', () => {
  it('puts every thread but the main one at nice 19 and leaves the main thread where it was', () => {
    const mainBefore = niceOf(String(process.pid));
    const lowered = lowerHelperThreadPriority();
    const helpers = readdirSync('/proc/self/task').filter((tid) => Number(tid) !== process.pid);
    expect(lowered).toBeGreaterThan(0);
    expect(helpers.map(niceOf)).toEqual(helpers.map(() => 19));
    expect(niceOf(String(process.pid))).toBe(mainBefore);
  });
});
