import type { Socket } from 'socket.io';

/** The private fields of `ws` this file touches (checked at install: a missing one installs nothing). */
export const WS_FIELDS = { receiver: '_receiver', rawSocket: '_socket', fragments: '_fragments' } as const;
type Receiver = { [WS_FIELDS.fragments]: unknown[] };
type RawSocket = { prependListener(event: 'data', listener: () => void): unknown };
type WsSocket = { [WS_FIELDS.rawSocket]?: RawSocket; [WS_FIELDS.receiver]?: Receiver };
type EngineConn = { writeBuffer: unknown[]; transport?: { name?: string; socket?: WsSocket }; once(event: 'upgrade', listener: () => void): unknown };

/**
 * Why the scavenges of a 1 Hz socket fleet were slow, and what this changes.
 *
 * On every message, `ws` and engine.io replace two arrays of the socket with new empty ones and fill them at the
 * NEXT message: `ws`'s receiver takes a fresh `_fragments` array when it hands a message on (the next frame's
 * payload is pushed into it), and engine.io takes a fresh `writeBuffer` when it flushes (the next outgoing packet,
 * here the next acknowledgement, is pushed into it). At 1 Hz such an array lives a second, longer than the ~0.7 s
 * between scavenges of the server's 64 MB young generation, so V8 promotes it to the old generation. At the next
 * message it is filled with young objects (the frame's payload view and its read buffer; the packet, its options and
 * its encoded string) and dropped; but old-generation garbage counts as alive until the next major GC, so those young
 * objects are kept by it: copied at the next scavenge and promoted at the one after (a dead parent keeping its
 * children alive, "nepotism"). At 5,000 drivers that was half of what every scavenge copied
 * (`--trace-gc-nvp`: 2.8 MB survived and 2.6 MB promoted per scavenge, 1.6 and 1.1 with this).
 *
 * When a chunk arrives on the TCP socket (before `ws` parses it), each of the two arrays that is empty is replaced
 * with a new one: what the message then puts in them goes into a young array, and dies young with it. An empty
 * array is interchangeable with another, so nothing else changes. Installed on `/driver` sockets, the ones that
 * stream; returns false (and installs nothing) when the transport is not a WebSocket yet (installed at its upgrade)
 * or a dependency no longer has these fields (test/realtime/young-socket-state.test.ts fails then).
 */
export function keepMessageStateYoung(socket: Pick<Socket, 'conn'>): boolean {
  const conn = socket.conn as unknown as EngineConn;
  if (conn.transport?.name !== 'websocket') {
    conn.once('upgrade', () => void keepMessageStateYoung(socket));
    return false;
  }
  const receiver = conn.transport.socket?.[WS_FIELDS.receiver];
  const raw = conn.transport.socket?.[WS_FIELDS.rawSocket];
  if (!receiver || !raw || !Array.isArray(receiver[WS_FIELDS.fragments]) || !Array.isArray(conn.writeBuffer)) return false;
  raw.prependListener('data', () => {
    // A fragmented message or packets waiting for the transport: those arrays are in use, and left alone.
    if (receiver[WS_FIELDS.fragments].length === 0) receiver[WS_FIELDS.fragments] = [];
    if (conn.writeBuffer.length === 0) conn.writeBuffer = [];
  });
  return true;
}
