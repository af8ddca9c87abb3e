import { performance } from 'node:perf_hooks';

/** Wall-clock milliseconds with sub-millisecond precision (comparable across processes of this machine). */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/** A callback that does nothing (a waiter's resting state). */
export const idle = (): void => undefined;

export type Percentiles = { count: number; p50: number; p95: number; p99: number; max: number };

const round = (ms: number): number => Math.round(ms * 100) / 100;

/** Nearest-rank percentiles of `values` (ms), rounded to 0.01 ms. */
export function percentiles(values: number[]): Percentiles {
  const sorted = values.toSorted((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  return { count: sorted.length, p50: round(at(50)), p95: round(at(95)), p99: round(at(99)), max: round(sorted.at(-1) ?? 0) };
}

export type OpenLoopResult = { issued: number; seconds: number; ratePerSecond: number; batches: number };

/**
 * An open loop: every `tickMs`, fires the items that are due by now at `ratePerSecond` (so a slow tick catches up
 * instead of lowering the rate, and a slow system never slows the arrivals: no coordinated omission). `fire` gets the
 * first index and the count of the batch and is not awaited before the next tick; all batches are awaited at the end.
 */
export async function openLoop(
  ratePerSecond: number,
  seconds: number,
  fire: (first: number, count: number) => Promise<void>,
  tickMs = 10,
): Promise<OpenLoopResult> {
  const total = Math.round(ratePerSecond * seconds);
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  let issued = 0;
  let failure: unknown = null;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * ratePerSecond)) - issued;
      if (due > 0) {
        inFlight.push(fire(issued, due).catch((error: unknown) => void (failure ??= error)));
        issued += due;
      }
      if (issued >= total || failure) {
        clearInterval(timer);
        resolve();
      }
    };
    const timer = setInterval(tick, tickMs);
  });
  await Promise.all(inFlight);
  if (failure) throw failure;
  const elapsed = (performance.now() - started) / 1000;
  return { issued, seconds: elapsed, ratePerSecond: issued / elapsed, batches: inFlight.length };
}
