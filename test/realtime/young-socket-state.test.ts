import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Socket as ServerSocket } from 'socket.io';
import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepMessageStateYoung, WS_FIELDS } from '../../realtime/young-socket-state.ts';

/**
 * `keepMessageStateYoung` reaches into `ws` and engine.io: these tests fail when an upgrade of either renames what it
 * touches (it would then install nothing, silently), when it stops keeping a message's objects out of the arrays
 * made at the message before, or when it changes what a socket receives or answers.
 */
type Internals = { writeBuffer: unknown[]; transport: { socket: Record<string, Record<string, unknown[] | undefined>> } };

let server: Server;
let port: number;
/** Per connection: whether the shim installed, and the arrays as each `echo` found them. */
const seen = new Map<string, { installed: boolean; fragments: unknown[][]; writeBuffers: unknown[][]; masks: unknown[] }>();

beforeAll(async () => {
  const http = createServer();
  server = new Server(http, { serveClient: false, maxHttpBufferSize: 1024 * 1024 });
  server.on('connection', (socket: ServerSocket) => {
    const record = { installed: keepMessageStateYoung(socket), fragments: [] as unknown[][], writeBuffers: [] as unknown[][], masks: [] as unknown[] };
    seen.set(socket.id, record);
    socket.on('echo', (payload: unknown, ack: (reply: unknown) => void) => {
      const conn = socket.conn as unknown as Internals;
      // The array `ws` made when it handed this message on, which the next message's payload would be pushed into.
      const receiver = conn.transport.socket[WS_FIELDS.receiver]!;
      record.fragments.push(receiver[WS_FIELDS.fragments]!);
      // The last frame's mask, a view of the read buffer the message came in.
      record.masks.push(receiver[WS_FIELDS.mask]);
      ack(payload);
      // The array engine.io made when it flushed this acknowledgement, which the next one would be pushed into.
      record.writeBuffers.push(conn.writeBuffer);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  port = (http.address() as AddressInfo).port;
});

afterAll(() => server.close());

function connect(transports: ('websocket' | 'polling')[]): Promise<Socket> {
  const socket = io(`http://127.0.0.1:${port}`, { transports, reconnection: false, forceNew: true });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
  });
}

const echo = (socket: Socket, payload: unknown): Promise<unknown> => socket.timeout(10_000).emitWithAck('echo', payload);

describe('keepMessageStateYoung', () => {
  it('installs on a WebSocket connection and keeps each message out of the arrays made at the message before', async () => {
    const socket = await connect(['websocket']);
    try {
      for (let i = 0; i < 5; i += 1) expect(await echo(socket, { i, lat: 40 + i })).toEqual({ i, lat: 40 + i });
      const record = seen.get(socket.id!)!;
      expect(record.installed).toBe(true);
      // Without the shim, message k+1's payload view lands in message k's `_fragments`, and acknowledgement k+1 in
      // the `writeBuffer` left by flush k: those arrays would hold one item each.
      expect(record.fragments.slice(0, -1).map((array) => array.length)).toEqual([0, 0, 0, 0]);
      expect(record.writeBuffers.slice(0, -1).map((array) => array.length)).toEqual([0, 0, 0, 0]);
      // Dropped once the message was read, so the read buffer does not stay until the next message.
      expect(record.masks).toEqual([undefined, undefined, undefined, undefined, undefined]);
    } finally {
      socket.close();
    }
  });

  it('installs when a polling connection upgrades to WebSocket', async () => {
    const socket = await connect(['polling', 'websocket']);
    try {
      if (socket.io.engine.transport.name !== 'websocket') await new Promise<void>((resolve) => socket.io.engine.once('upgrade', () => resolve()));
      for (let i = 0; i < 3; i += 1) await echo(socket, i);
      const record = seen.get(socket.id!)!;
      // Not at the handshake (a polling transport has no such arrays): at the upgrade.
      expect(record.installed).toBe(false);
      expect(record.fragments.slice(-3, -1).map((array) => array.length)).toEqual([0, 0]);
      expect(record.writeBuffers.slice(-3, -1).map((array) => array.length)).toEqual([0, 0]);
    } finally {
      socket.close();
    }
  });

  it('leaves what sockets send and receive unchanged: large messages split across reads, many in flight at once', async () => {
    const socket = await connect(['websocket']);
    try {
      const big = { text: 'x'.repeat(300_000), points: Array.from({ length: 2000 }, (_, i) => ({ lat: i / 100, lng: -1 - i / 100 })) };
      const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => echo(socket, i % 10 === 0 ? { ...big, i } : { i })));
      expect(replies).toEqual(Array.from({ length: 50 }, (_, i) => (i % 10 === 0 ? { ...big, i } : { i })));
    } finally {
      socket.close();
    }
  });
});
