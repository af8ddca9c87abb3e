import { performance, PerformanceObserver } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { watchLoop, type LoopFigures } from './loop-monitor.ts';
import { percentiles, type Percentiles } from './open-loop.ts';

/**
 * Simulated driver apps for bench/realtime.ts, in a child process of their own (forked with IPC) so the server's
 * event loop and CPU figures are the server's alone. One request message in, one reply out, per step.
 */
export type ClientRequest =
  | { type: 'connect'; port: number; host: string; tokens: string[] }
  | { type: 'stream'; seconds: number; hz: number }
  | { type: 'saturate'; seconds: number }
  | { type: 'disconnect' };

/**
 * `clientLoop`, `clientCpuPercent`: this process's own event-loop delay, GC pauses and CPU over the phase. A stall
 * here delays the reading of acks and so inflates the measured latency of both targets alike (the echo's p99 beside
 * it is the control), and its CPU competes with the server's on a small machine.
 */
export type StreamReply = {
  sent: number; acked: number; refused: number; lost: number; seconds: number; latencyMs: Percentiles;
  /** The same latencies less the time this process spent in its own GC pauses while each fix waited for its ack. */
  latencyLessClientGcMs: Percentiles;
  clientLoop: LoopFigures; clientCpuPercent: number;
};
export type ClientReply = { ok: true; connected?: number; ms?: number; stream?: StreamReply } | { ok: false; error: string };

const send = process.send?.bind(process);
if (!send) throw new Error('realtime-clients.ts must be forked with an IPC channel');

let sockets: Socket[] = [];
/** Per socket: the last recorded_at sent, so every fix of a driver is newer than the one before (never stale). */
let lastSent: number[] = [];

function connectOne(port: number, host: string, token: string): Promise<Socket> {
  const socket = io(`http://127.0.0.1:${port}/driver`, { transports: ['websocket'], reconnection: false, forceNew: true, timeout: 60_000, extraHeaders: { host }, auth: { token } });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (error: Error & { data?: unknown }) => reject(new Error(`connect refused: ${JSON.stringify(error.data ?? error.message)}`)));
  });
}

async function connectAll(port: number, host: string, tokens: string[]): Promise<number> {
  sockets = [];
  for (let i = 0; i < tokens.length; i += 100) sockets.push(...(await Promise.all(tokens.slice(i, i + 100).map((token) => connectOne(port, host, token)))));
  lastSent = sockets.map(() => 0);
  return sockets.length;
}

function fixFor(index: number): { lat: number; lng: number; speed: number; recorded_at: string } {
  const at = Math.max(Date.now(), lastSent[index]! + 1);
  lastSent[index] = at;
  const step = (at / 1000) % 3600;
  return { lat: 40 + (index % 100) * 0.01 + step * 0.0001, lng: -3 + Math.floor(index / 100) * 0.01, speed: 11, recorded_at: new Date(at).toISOString() };
}

/** How long an unanswered fix is waited for at the end of a phase before it counts as lost. */
const ACK_TIMEOUT_MS = 10_000;

type Tally = { sent: number; acked: number; refused: number; lost: number; latencies: number[]; answeredAt: number[]; open: boolean; answered(): void };

function newTally(): Tally {
  return { sent: 0, acked: 0, refused: 0, lost: 0, latencies: [], answeredAt: [], open: true, answered: () => {} };
}

/**
 * One fix with an acknowledgement callback: no timer and no promise per fix (a `timeout().emitWithAck` each cost
 * this process a timer and a promise, and its own stalls inflate the latency it measures). `then` runs after the ack.
 */
function emitOne(index: number, tally: Tally, then?: () => void): void {
  const started = performance.now();
  tally.sent += 1;
  sockets[index]!.emit('location', fixFor(index), (reply: { data?: unknown }) => {
    if (!tally.open) return;
    const now = performance.now();
    tally.latencies.push(now - started);
    tally.answeredAt.push(now);
    if (reply.data) tally.acked += 1;
    else tally.refused += 1;
    tally.answered();
    then?.();
  });
}

/** Waits until every fix sent is answered, or ACK_TIMEOUT_MS; the unanswered ones are lost. */
async function settle(tally: Tally): Promise<void> {
  const answered = () => tally.acked + tally.refused;
  if (answered() < tally.sent) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ACK_TIMEOUT_MS);
      tally.answered = () => {
        if (answered() < tally.sent) return;
        clearTimeout(timer);
        resolve();
      };
    });
  }
  tally.open = false;
  tally.lost = tally.sent - answered();
}

/**
 * Every socket sends `hz` fixes a second, phases spread evenly over the period (an open loop): fix k goes to socket
 * k mod N at k / (N·hz) seconds. One 1 ms interval issues what is due (about 5 fixes per tick at 5,000 Hz), as the
 * per-socket timers it replaces did in effect (timers have millisecond resolution) without 5,000 timers a second.
 */
async function stream(seconds: number, hz: number): Promise<StreamReply> {
  const tally = newTally();
  const watch = watchClient();
  const pauses = watchPauses();
  const started = performance.now();
  const rate = sockets.length * hz;
  const total = Math.floor(seconds * rate);
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      while (tally.sent < due) emitOne(tally.sent % sockets.length, tally);
      if (tally.sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  await settle(tally);
  return { ...summary(tally, pauses.stop()), seconds: (performance.now() - started) / 1000, ...watch.stop() };
}

/** Closed loop: every socket keeps one fix in flight for `seconds` (the server's capacity). */
async function saturate(seconds: number): Promise<StreamReply> {
  const tally = newTally();
  const watch = watchClient();
  const pauses = watchPauses();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const next = (index: number) => (): void => {
    if (performance.now() < deadline) emitOne(index, tally, next(index));
  };
  sockets.forEach((_, index) => next(index)());
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  await settle(tally);
  return { ...summary(tally, pauses.stop()), seconds: (performance.now() - started) / 1000, ...watch.stop() };
}

/** This process's own GC pauses over a phase, as [start, end] in `performance.now()` time, in order. */
function watchPauses(): { stop(): number[][] } {
  const pauses: number[][] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push([entry.startTime, entry.startTime + entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      observer.disconnect();
      return pauses.sort((a, b) => a[0]! - b[0]!);
    },
  };
}

/**
 * Each latency less the part of its wait this process spent paused in its own GC (an ack that arrived meanwhile was
 * read only after it): what the server and the network took, as far as the clients can tell. Pauses are few (tens
 * per phase), so each fix is checked against all of them.
 */
function lessClientPauses(tally: Tally, pauses: number[][]): number[] {
  return tally.latencies.map((latency, i) => {
    const end = tally.answeredAt[i]!;
    const start = end - latency;
    let paused = 0;
    for (const [from, to] of pauses) if (to! > start && from! < end) paused += Math.min(end, to!) - Math.max(start, from!);
    return latency - paused;
  });
}

/** This process's loop delay, GC pauses and CPU over a phase: what the clients themselves add to the latency. */
function watchClient(): { stop(): { clientLoop: LoopFigures; clientCpuPercent: number } } {
  const loop = watchLoop();
  const cpu = process.cpuUsage();
  const started = performance.now();
  return {
    stop() {
      const used = process.cpuUsage(cpu);
      return { clientLoop: loop.stop(), clientCpuPercent: ((used.user + used.system) / 1000 / (performance.now() - started)) * 100 };
    },
  };
}

const summary = (tally: Tally, pauses: number[][]) => ({
  sent: tally.sent, acked: tally.acked, refused: tally.refused, lost: tally.lost,
  latencyMs: percentiles(tally.latencies), latencyLessClientGcMs: percentiles(lessClientPauses(tally, pauses)),
});

const reply = (value: ClientReply): void => void send(value);
const fail = (error: unknown): void => reply({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });

process.on('message', (request: ClientRequest) => {
  const started = performance.now();
  if (request.type === 'connect') connectAll(request.port, request.host, request.tokens).then((connected) => reply({ ok: true, connected, ms: performance.now() - started }), fail);
  else if (request.type === 'stream') stream(request.seconds, request.hz).then((result) => reply({ ok: true, stream: result }), fail);
  else if (request.type === 'saturate') saturate(request.seconds).then((result) => reply({ ok: true, stream: result }), fail);
  else {
    for (const socket of sockets) socket.close();
    sockets = [];
    reply({ ok: true });
  }
});
process.on('disconnect', () => process.exit(0));
