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

/** Calls the h3 app directly: a request in, a Response out, no port. */
export function inMemoryTransport(app: H3, host: string): Transport {
  return {
    host,
    async send(method, path, credentials, body) {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers = new Headers({ host, ...credentials, ...(text === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }) });
      const response = await app.fetch(inMemoryRequest(method, `http://${host}${path}`, headers, text));
      const answer = await answerText(response);
      return { status: answer.status, body: answer.text ? (JSON.parse(answer.text) as unknown) : null };
    },
  };
}

/**
 * What the application reads of a request in memory, as srvx's Node adapter hands it over for a socket: a plain
 * object with the method, the URL, real `Headers` and the body as the string it is (the operations read it with
 * `text()`, http/request-input.ts). A fetch `Request` built per call (undici's: its own headers list, an
 * AbortSignal, a URL parse) cost ~10 µs of CPU per call where this costs ~1.3 (a loop of each alone), for nothing
 * the simulator tests. `body` is null: nothing the simulator calls reads the body as a stream (file uploads do; the
 * simulator makes none).
 */
function inMemoryRequest(method: string, url: string, headers: Headers, text: string | undefined): Request {
  const inMemory = {
    method,
    url,
    headers,
    body: null,
    bodyUsed: false,
    text: () => Promise.resolve(text ?? ''),
    json: () => Promise.resolve(JSON.parse(text ?? '') as unknown),
  };
  return inMemory as unknown as Request;
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
