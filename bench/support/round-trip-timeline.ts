import { Client } from 'pg';
import { schedstatOf } from './schedstat.ts';

/** One round trip: what was sent, on which backend, when (ms from the operation's start), and the backend's CPU and run-queue wait meanwhile. */
export type RoundTrip = { pid: number; statement: string; bytes: number; sentMs: number; replyMs: number; backendCpuMs: number; backendWaitMs: number };

/** One operation's timeline: its round trips, its wall time, and the Node main thread's CPU and run-queue wait. */
export type Timeline = { startedAt: number; wallMs: number; mainCpuMs: number; mainWaitMs: number; processCpuMs: number; trips: RoundTrip[] };

/**
 * Runs `count` operations back to back and records every round trip sent through `pg` meanwhile, each in the
 * timeline of the operation running when it was sent (so the relay's pass that overlaps the next operation shows
 * there), with the serving backend's CPU and run-queue wait from schedstat (ns resolution; the server runs on this
 * machine). A diagnostic: each round trip reads two /proc files on send and two on reply.
 */
export async function recordTimelines(count: number, operation: (i: number) => Promise<void>): Promise<Timeline[]> {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const timelines: Timeline[] = [];
  let current: Timeline = { startedAt: 0, wallMs: 0, mainCpuMs: 0, mainWaitMs: 0, processCpuMs: 0, trips: [] };
  let origin = performance.now();
  prototype.query = function (this: { processID: number }, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
    const path = `/proc/${this.processID}/schedstat`;
    const before = schedstatOf(path);
    const start = origin;
    // A copy, not a slice: V8's slice of the 11 KB statement would keep the whole of it alive for the series, and
    // those retained strings made the scavenges this diagnostic reports (11.8 of 15.9 KB kept per dispatch).
    const statement = Buffer.from(text.replace(/\s+/g, ' ').slice(0, 600)).toString();
    const trip: RoundTrip = { pid: this.processID, statement, bytes: Buffer.byteLength(text), sentMs: performance.now() - start, replyMs: Number.NaN, backendCpuMs: 0, backendWaitMs: 0 };
    current.trips.push(trip);
    const done = () => {
      const after = schedstatOf(path);
      trip.replyMs = performance.now() - start;
      trip.backendCpuMs = (after.cpu - before.cpu) / 1e6;
      trip.backendWaitMs = (after.wait - before.wait) / 1e6;
    };
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      args[args.length - 1] = (...reply: unknown[]) => {
        done();
        return (callback as (...a: unknown[]) => unknown)(...reply);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(done, done);
    return result;
  };
  const mainThread = `/proc/${process.pid}/task/${process.pid}/schedstat`;
  try {
    for (let i = 0; i < count; i++) {
      current = { startedAt: 0, wallMs: 0, mainCpuMs: 0, mainWaitMs: 0, processCpuMs: 0, trips: [] };
      timelines.push(current);
      const mainBefore = schedstatOf(mainThread);
      const cpuBefore = process.cpuUsage();
      origin = performance.now();
      current.startedAt = origin;
      await operation(i);
      current.wallMs = performance.now() - origin;
      const mainAfter = schedstatOf(mainThread);
      const cpu = process.cpuUsage(cpuBefore);
      current.mainCpuMs = (mainAfter.cpu - mainBefore.cpu) / 1e6;
      current.mainWaitMs = (mainAfter.wait - mainBefore.wait) / 1e6;
      current.processCpuMs = (cpu.user + cpu.system) / 1000;
    }
    return timelines;
  } finally {
    prototype.query = original;
  }
}

/** Text only the outbox relay's round trips hold (its lock). */
const RELAY_LOCK = "hashtext('dispatch.outbox-relay')";

/**
 * Runs `operation` with the prepared statements of its round trips explained: `explain (analyze, buffers)` of each
 * read (`dispatch_site_head…`: run once more, before itself, in the same round trip) and in place of each write
 * whose rows the command does not read (`writes`: statement names). Returns the plans, in order, and pushes each
 * round trip's text as the caller sent it to `sent`. A diagnostic.
 */
export async function explainRoundTrips(operation: () => Promise<void>, reads: RegExp, writes: RegExp, sent: string[] = []): Promise<string[]> {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const plans: string[] = [];
  const explain = 'explain (analyze, buffers, costs off, timing on)';
  prototype.query = function (this: object, ...args: unknown[]) {
    const first = args[0] as { text?: string } | string;
    const text = typeof first === 'string' ? first : (first.text ?? '');
    sent.push(text);
    // The outbox relay's pass runs on its own connection meanwhile: explained, its move would answer plans for rows
    // (the relay would fail the pass and log it), so it goes out as sent.
    if (text.includes(RELAY_LOCK)) return original.apply(this, args);
    const parts = text.split(/;\s+(?=execute |select |commit)/);
    let touched = false;
    const rewritten = parts.flatMap((part) => {
      const name = /^execute (\w+)\(/.exec(part)?.[1];
      if (!name) return [part];
      if (reads.test(name)) {
        touched = true;
        return [`${explain} ${part}`, part];
      }
      if (writes.test(name)) {
        touched = true;
        return [`${explain} ${part}`];
      }
      return [part];
    });
    if (!touched) return original.apply(this, args);
    const callback = args.at(-1) as (error: Error | null, result: unknown) => void;
    const config = typeof first === 'string' ? { text: rewritten.join('; ') } : { ...first, text: rewritten.join('; ') };
    return original.call(this, config, (error: Error | null, result: unknown) => {
      for (const r of Array.isArray(result) ? result : [result]) {
        const rows = (r as { rows?: Record<string, string>[] } | undefined)?.rows;
        if (rows?.[0] && 'QUERY PLAN' in rows[0]) plans.push(rows.map((row) => row['QUERY PLAN']).join('\n'));
      }
      callback(error, result);
    });
  };
  try {
    await operation();
    return plans;
  } finally {
    prototype.query = original;
  }
}
