import { io, type Socket } from 'socket.io-client';

export type ConnectOptions = { token?: string; headers?: Record<string, string> };

/** What a refused handshake carries (`connect_error`'s `data`). */
export type Refusal = { code: string; error: string };

/**
 * A real socket.io-client on a site's host (the Host header picks the tenant, as `<site>.localhost` would), over
 * WebSocket only and without reconnection, so a refused handshake fails the promise.
 */
export function connectSocket(port: number, site: string, namespace: '/driver' | '/dispatch', options: ConnectOptions): Promise<Socket> {
  const socket = io(`http://127.0.0.1:${port}${namespace}`, {
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    timeout: 10_000,
    extraHeaders: { host: `${site}.localhost:${port}`, ...options.headers },
    ...(options.token ? { auth: { token: options.token } } : {}),
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (error: Error & { data?: Refusal }) => {
      socket.close();
      reject(Object.assign(new Error(`refused: ${error.data?.code ?? error.message}`), { refusal: error.data }));
    });
  });
}

/** The refusal of a handshake that must fail. */
export async function refusalOf(attempt: Promise<Socket>): Promise<Refusal | undefined> {
  try {
    const socket = await attempt;
    socket.close();
    return undefined;
  } catch (error) {
    return (error as { refusal?: Refusal }).refusal;
  }
}

/** Emits with an acknowledgement and resolves with the server's reply. */
export function ask<T>(socket: Socket, event: string, payload: unknown, timeoutMs = 10_000): Promise<T> {
  return socket.timeout(timeoutMs).emitWithAck(event, payload) as Promise<T>;
}

/** Collects every payload of `event` a socket receives from now on. */
export function collect<T>(socket: Socket, event: string): T[] {
  const seen: T[] = [];
  socket.on(event, (payload: T) => seen.push(payload));
  return seen;
}
