import { Agent, request } from 'node:http';
import type { H3 } from 'h3';

/** Live runs reuse connections: a fresh TCP connection per call would measure the handshake, not the server. */
const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });

export type ApiAnswer = { status: number; body: unknown };

/**
 * How the simulator reaches the REST API. In process it calls the real h3 application in memory (the same
 * operations, validation, auth and engine as over the network, without sockets); live, it speaks HTTP to a server.
 */
export type Transport = {
  /** `site.example:3000`-style host the site is served on (the tenant is its first label). */
  readonly host: string;
  send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<ApiAnswer>;
};

/** Calls the h3 app directly: a Request in, a Response out, no port. */
export function inMemoryTransport(app: H3, host: string): Transport {
  return {
    host,
    async send(method, path, credentials, body) {
      const response = await app.fetch(
        new Request(`http://${host}${path}`, {
          method,
          headers: { host, ...credentials, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
    },
  };
}

/**
 * Plain HTTP to a running server. `*.localhost` names are sent to 127.0.0.1 with the Host header kept, so
 * `http://demo.localhost:3000` works without DNS setup.
 */
export function httpTransport(baseUrl: string): Transport {
  const url = new URL(baseUrl);
  const connectHost = url.hostname.endsWith('.localhost') || url.hostname === 'localhost' ? '127.0.0.1' : url.hostname;
  const port = Number(url.port || 80);
  return {
    host: url.host,
    send(method, path, credentials, body) {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = { host: url.host, ...credentials };
      if (payload !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      return new Promise((resolve, reject) => {
        const req = request({ host: connectHost, port, method, path, headers, agent: keepAlive }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : null });
            } catch {
              resolve({ status: res.statusCode ?? 0, body: text });
            }
          });
        });
        req.on('error', reject);
        req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
        req.end(payload);
      });
    },
  };
}
