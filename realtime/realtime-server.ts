import type { Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server, type Namespace } from 'socket.io';
import type { Services } from '../app/services.ts';
import type { DispatchClientEvents, DispatchServerEvents, SocketData } from './events.ts';
import { serveDrivers, type DriverNamespace } from './driver-channel.ts';
import { authenticateHandshake } from './handshake.ts';
import { publishPositions, publishRelayed } from './live-feed.ts';
import { createPresence } from './presence.ts';
import { createSocketCredentials } from './socket-credentials.ts';
import { dispatchRoom, staffRoom } from './rooms.ts';

export type Realtime = {
  io: Server;
  /** Starts the background work sockets need (the consumer of drivers' disconnect grace periods). */
  start(): Promise<void>;
  close(): Promise<void>;
};

type DispatchNamespace = Namespace<DispatchClientEvents, DispatchServerEvents, Record<string, never>, SocketData>;

/** An offline backlog of 500 fixes is about 75 KB of JSON; anything far larger is not a driver app. */
const MAX_MESSAGE_BYTES = 256 * 1024;

/**
 * socket.io on the API's own node:http server (DESIGN §5, §6): `/driver` and `/dispatch`, authenticated like REST,
 * fed by the location tracker and the outbox relay. With Redis, the Redis adapter shares rooms between processes.
 */
export function attachRealtime(server: HttpServer, services: Services): Realtime {
  const io = new Server(server, { serveClient: false, maxHttpBufferSize: MAX_MESSAGE_BYTES, cors: { origin: false } });
  // Without auto-pipelining: the adapter's unsubscribe calls at close must be on the wire before QUIT.
  const pub = services.redis?.duplicate({ enableAutoPipelining: false }) ?? null;
  const sub = services.redis?.duplicate({ enableAutoPipelining: false }) ?? null;
  if (pub && sub) io.adapter(createAdapter(pub, sub, { key: `${services.config.redisPrefix}:socket.io` }));

  const drivers = io.of('/driver') as unknown as DriverNamespace;
  const presence = createPresence(services, drivers as unknown as Namespace);
  const credentials = createSocketCredentials(services);
  serveDrivers(drivers, services, presence, credentials);

  const dispatch = io.of('/dispatch') as unknown as DispatchNamespace;
  dispatch.use(authenticateHandshake(services, 'realtime.dispatch', credentials));
  dispatch.on('connection', (socket) => {
    credentials.watch(socket);
    void socket.join([dispatchRoom(socket.data.siteId), staffRoom(socket.data.siteId, socket.data.userId)]);
  });

  // Commits can still land while the server closes (the tracker drains after it): nothing is published then.
  let open = true;
  services.outboxRelay.onRelayed((events) => open && publishRelayed(io, events));
  services.locations.onApplied((siteId, applied) => open && publishPositions(io, siteId, applied));

  return {
    io,
    start: () => presence.start(),
    /** Closes every socket, the adapter and the HTTP server socket.io is attached to. */
    async close() {
      open = false;
      presence.close();
      credentials.close();
      await io.close();
      await Promise.allSettled([pub?.quit(), sub?.quit()]);
    },
  };
}
