import { Agent, request } from 'node:http';
import { Readable } from 'node:stream';
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
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers = { host, ...credentials, ...(text === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }) };
      const response = await app.fetch(text === undefined ? new Request(`http://${host}${path}`, { method, headers }) : textBodyRequest(`http://${host}${path}`, { method, headers }, text));
      const answer = await answerText(response);
      return { status: answer.status, body: answer.text ? (JSON.parse(answer.text) as unknown) : null };
    },
  };
}

/**
 * A request whose body is already a string: the operations read it with `text()` (http/request-input.ts), which
 * hands the string back as it is. Passing it as a fetch body made undici wrap it in a stream and read the stream
 * back, a few per cent of the simulator's CPU for nothing it tests. `body` stays empty: nothing the simulator calls
 * reads the body as a stream (file uploads do; the simulator makes none).
 */
function textBodyRequest(url: string, init: RequestInit, text: string): Request {
  return Object.defineProperties(new Request(url, init), {
    text: { value: () => Promise.resolve(text) },
    json: { value: () => Promise.resolve(JSON.parse(text) as unknown) },
  });
}

/** srvx's FastResponse (the operations' answers) hands its body to node:http as it is, through this method. */
const TO_NODE_RESPONSE = '_toNodeResponse';
type NodeReadyResponse = Response & { [TO_NODE_RESPONSE](): { status: number; body: unknown } };

/**
 * The answer's status and text, read as srvx's Node adapter reads it for a socket: a FastResponse's string body
 * is taken as it is, without building a fetch Response and streaming the string through it (`text()` does both).
 */
async function answerText(response: Response): Promise<{ status: number; text: string }> {
  if (typeof (response as Partial<NodeReadyResponse>)[TO_NODE_RESPONSE] !== 'function') return { status: response.status, text: await response.text() };
  const { status, body } = (response as NodeReadyResponse)[TO_NODE_RESPONSE]();
  if (typeof body === 'string') return { status, text: body };
  if (body === null || body === undefined) return { status, text: '' };
  const stream = body instanceof Readable ? (Readable.toWeb(body) as ReadableStream) : (body as ConstructorParameters<typeof Response>[0]);
  return { status, text: await new Response(stream).text() };
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
