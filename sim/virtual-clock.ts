import type { Clock } from '../engine/clock.ts';

/**
 * The engine's clock during an in-process run: it stands still while a simulated event is handled and jumps to
 * the next event's time, so a day of work runs as fast as the commands themselves.
 */
export class VirtualClock implements Clock {
  private ms: number;

  constructor(start: Date) {
    this.ms = start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  /** Moves to `atMs`; time never runs backwards. */
  set(atMs: number): void {
    if (atMs > this.ms) this.ms = atMs;
  }
}
