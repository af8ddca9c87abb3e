import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from 'h3/node';
import { createHttpApp } from '../http/app.ts';
import { mountAttachmentTransfer } from '../http/attachment-transfer.ts';
import { mountIntegrationCallback } from '../http/integration-callback.ts';
import { ALL_OPERATIONS } from '../http/operations/all-operations.ts';
import { attachRealtime } from '../realtime/realtime-server.ts';
import { createEarningsConsumer } from '../engine/earnings/record-earning.ts';
import { EVENT_QUEUES } from '../engine/outbox/event-queues.ts';
import { startDispatchWorker } from '../engine/dispatch/dispatch-worker.ts';
import { startEtaWorker } from '../engine/eta/eta-worker.ts';
import { mappingPolicyOf } from '../engine/eta/eta-check.ts';
import { trackRequests } from './drain-requests.ts';
import type { Services } from './services.ts';

export type RunningServer = {
  server: Server;
  port: number;
  url: string;
  /** Graceful: see `shutDown` in startServer. Calling it again returns the same promise. */
  close(): Promise<void>;
};

/** Serves the HTTP API and socket.io (`/driver`, `/dispatch`) on one node:http server. */
export async function startServer(services: Services): Promise<RunningServer> {
  const app = createHttpApp(services, ALL_OPERATIONS);
  mountAttachmentTransfer(app, services);
  mountIntegrationCallback(app, services);
  const server = createServer(toNodeHandler(app));
  const realtime = attachRealtime(server, services);
  // After socket.io attached: it replaces the 'request' listeners present then.
  const requests = trackRequests(server);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(services.config.port, services.config.bindAddress, resolve);
  });
  const { port } = server.address() as AddressInfo;
  // Committed events leave only through the relay (DESIGN §3): it runs wherever the API runs.
  services.outboxRelay.start();
  // What Redis loses (a restart without persistence) comes back from PostgreSQL, under the same job ids.
  services.queueSweeper?.start();
  // Consumers of committed events that every API process runs (webhook delivery is started separately).
  await services.queue.process(EVENT_QUEUES.earnings, createEarningsConsumer({ orm: services.db.orm, logger: services.logger, crypto: services.crypto, mappingPolicy: mappingPolicyOf(services.config) }), { concurrency: 2 });
  // Drivers whose sockets closed go offline when their grace period ends, whichever process it ends in.
  await realtime.start();
  // Scheduled dispatches fall due and auto dispatch runs in every API process (DESIGN §7).
  const dispatchWorker = await startDispatchWorker(services);
  // ETA checks of moving drivers and the notifications they make due (issue 5), in every API process.
  await startEtaWorker(services);
  let closing: Promise<void> | null = null;
  /**
   * Stops accepting at once (socket.io's close closes the HTTP server after ending its sockets cleanly), lets the
   * API requests already running answer for up to `SHUTDOWN_GRACE_MS`, then cuts what is left. The services close
   * after this, so a committed request is answered before its database and queues go away.
   */
  const shutDown = async (): Promise<void> => {
    const realtimeClosed = realtime.close();
    const cut = await requests.drain(services.config.shutdownGraceMs);
    if (cut > 0) services.logger.warn({ requests: cut, graceMs: services.config.shutdownGraceMs }, 'shutdown grace period over: running requests cut off');
    await realtimeClosed;
    await dispatchWorker.stop();
  };
  return {
    server,
    port,
    url: `http://${services.config.baseDomain}:${port}`,
    close: () => {
      closing ??= shutDown();
      return closing;
    },
  };
}
