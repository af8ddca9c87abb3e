import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
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

export type StreamReply = { sent: number; acked: number; refused: number; lost: number; seconds: number; latencyMs: Percentiles };
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

type Tally = { sent: number; acked: number; refused: number; lost: number; latencies: number[] };

function emitOne(index: number, tally: Tally): Promise<void> {
  const started = performance.now();
  tally.sent += 1;
  return sockets[index]!.timeout(10_000)
    .emitWithAck('location', fixFor(index))
    .then(
      (reply: { data?: unknown }) => {
        tally.latencies.push(performance.now() - started);
        if (reply.data) tally.acked += 1;
        else tally.refused += 1;
      },
      () => {
        tally.lost += 1;
      },
    );
}

/** Every socket sends `hz` fixes a second, phases spread evenly over the period (an open loop per socket). */
async function stream(seconds: number, hz: number): Promise<StreamReply> {
  const tally: Tally = { sent: 0, acked: 0, refused: 0, lost: 0, latencies: [] };
  const periodMs = 1000 / hz;
  const started = performance.now();
  const pending: Promise<void>[] = [];
  await Promise.all(
    sockets.map(async (_, index) => {
      await new Promise((resolve) => setTimeout(resolve, (index / sockets.length) * periodMs));
      for (let tick = 0; ; tick += 1) {
        const due = (index / sockets.length) * periodMs + tick * periodMs;
        if (due >= seconds * 1000) return;
        const wait = due - (performance.now() - started);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        pending.push(emitOne(index, tally));
      }
    }),
  );
  await Promise.all(pending);
  return { ...summary(tally), seconds: (performance.now() - started) / 1000 };
}

/** Closed loop: every socket keeps one fix in flight for `seconds` (the server's capacity). */
async function saturate(seconds: number): Promise<StreamReply> {
  const tally: Tally = { sent: 0, acked: 0, refused: 0, lost: 0, latencies: [] };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    sockets.map(async (_, index) => {
      while (performance.now() < deadline) await emitOne(index, tally);
    }),
  );
  return { ...summary(tally), seconds: (performance.now() - started) / 1000 };
}

const summary = (tally: Tally) => ({ sent: tally.sent, acked: tally.acked, refused: tally.refused, lost: tally.lost, latencyMs: percentiles(tally.latencies) });

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
