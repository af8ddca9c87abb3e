import type { IncomingMessage, Server } from 'node:http';

/** socket.io's long polls are held open on purpose; realtime's own close answers them, so they do not hold a drain. */
const isRealtime = (request: IncomingMessage) => request.url?.startsWith('/socket.io/') ?? false;

/** How often idle keep-alive connections are closed while requests finish. */
const SWEEP_MS = 25;

export type RequestDrain = {
  /**
   * Waits, at most `graceMs`, until no API request is running, closing each keep-alive connection as soon as it is
   * idle; then cuts whatever connection is left. Call it after the server stopped accepting (`server.close()`).
   * @returns how many requests were still running when the grace period ran out (0 when all were answered)
   */
  drain(graceMs: number): Promise<number>;
};

/**
 * Counts the API requests the server is running. A request whose transaction committed must get its answer even if a
 * shutdown begins meanwhile: cut off, the client sees a reset and retries, and a create is made twice.
 */
export function trackRequests(server: Server): RequestDrain {
  let running = 0;
  let settled: (() => void) | null = null;
  server.on('request', (request: IncomingMessage, response) => {
    if (isRealtime(request)) return;
    running += 1;
    response.once('close', () => {
      running -= 1;
      if (running === 0) settled?.();
    });
  });
  return {
    async drain(graceMs) {
      const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
      try {
        if (running > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, graceMs);
            settled = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      } finally {
        clearInterval(sweep);
        settled = null;
      }
      const cut = running;
      server.closeAllConnections();
      return cut;
    },
  };
}
