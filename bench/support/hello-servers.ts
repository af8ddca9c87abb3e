import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { H3 } from 'h3';
import { toNodeHandler } from 'h3/node';

export type Listening = { server: Server; port: number; close(): Promise<void> };

/** The baseline: the least a node:http server can do per request, with a JSON body like the API's. */
export function startRawServer(): Promise<Listening> {
  const body = JSON.stringify({ hello: 'world' });
  return listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

/**
 * The framework's own ceiling: a bare h3 app with one hello route, mounted as the API is (`toNodeHandler`). No
 * API code can beat it, so its ratio to raw shows how much of the gap is h3 + srvx rather than ours.
 */
export function startBareH3Server(): Promise<Listening> {
  const app = new H3().get('/', () => ({ hello: 'world' }));
  return listen(toNodeHandler(app) as RequestListener);
}

/** Counts the requests a server receives, for CPU time per request. */
export function requestCounter(server: Server): () => number {
  let served = 0;
  server.on('request', () => (served += 1));
  return () => served;
}

async function listen(handler: RequestListener): Promise<Listening> {
  const server: Server = createServer(handler);
  server.keepAliveTimeout = 65_000; // as app/server.ts, so neither server closes autocannon's connections
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
