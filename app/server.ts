import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from 'h3/node';
import { createHttpApp } from '../http/app.ts';
import { ALL_OPERATIONS } from '../http/operations/all-operations.ts';
import type { Services } from './services.ts';

export type RunningServer = { server: Server; port: number; url: string; close(): Promise<void> };

/** Serves the HTTP API (and, later, socket.io) on one node:http server. */
export async function startServer(services: Services): Promise<RunningServer> {
  const app = createHttpApp(services, ALL_OPERATIONS);
  const server = createServer(toNodeHandler(app));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(services.config.port, services.config.bindAddress, resolve);
  });
  const { port } = server.address() as AddressInfo;
  // Committed events leave only through the relay (DESIGN §3): it runs wherever the API runs.
  services.outboxRelay.start();
  return {
    server,
    port,
    url: `http://${services.config.baseDomain}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
