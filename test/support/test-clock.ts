import type { Clock } from '../../engine/clock.ts';

/** Real time plus an offset that tests move forward (token expiry, deadlines). */
export class TestClock implements Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}
