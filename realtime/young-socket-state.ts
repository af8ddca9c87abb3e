import type { Socket } from 'socket.io';

/** The private fields of `ws` this file touches (checked at install: a missing one installs nothing). */
export const WS_FIELDS = { receiver: '_receiver', rawSocket: '_socket', fragments: '_fragments', mask: '_mask', state: '_state', bufferedBytes: '_bufferedBytes' } as const;
type Receiver = { [WS_FIELDS.fragments]: unknown[]; [WS_FIELDS.mask]: unknown; [WS_FIELDS.state]: number; [WS_FIELDS.bufferedBytes]: number };
type RawSocket = { prependListener(event: 'data', listener: () => void): unknown; on(event: 'data', listener: () => void): unknown };
/** `ws`'s receiver between frames: waiting for the first bytes of the next one. */
const WS_GET_INFO = 0;
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
 * (`--trace-gc-nvp`: 3.1 MB survived and 2.6 MB promoted per scavenge; 1.05 and 0.77 with this, the mask below included).
 *
 * When a chunk arrives on the TCP socket (before `ws` parses it), each of the two arrays that is empty is replaced
 * with a new one: what the message then puts in them goes into a young array, and dies young with it. An empty
 * array is interchangeable with another, so nothing else changes. Once `ws` has read the chunk, the last frame's
 * mask (a 4-byte view of the chunk's read buffer, which `ws` keeps until the next frame) is dropped when no frame is
 * in progress, so the read buffer dies young too. Installed on `/driver` sockets, the ones that
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
  if (typeof receiver[WS_FIELDS.state] !== 'number' || typeof receiver[WS_FIELDS.bufferedBytes] !== 'number') return false;
  // Before `ws` reads the chunk.
  raw.prependListener('data', () => {
    // A fragmented message or packets waiting for the transport: those arrays are in use, and left alone.
    if (receiver[WS_FIELDS.fragments].length === 0) receiver[WS_FIELDS.fragments] = [];
    if (conn.writeBuffer.length === 0) conn.writeBuffer = [];
  });
  // After `ws` read the chunk (it parses synchronously). Between frames, with nothing buffered, the mask of the last
  // frame is no longer used (the next frame's is read before its payload): dropped, it no longer keeps the chunk's
  // read buffer alive for a second.
  raw.on('data', () => {
    if (receiver[WS_FIELDS.state] === WS_GET_INFO && receiver[WS_FIELDS.bufferedBytes] === 0) receiver[WS_FIELDS.mask] = undefined;
  });
  return true;
}
