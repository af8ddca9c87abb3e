import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

export type ApiRequest = {
  method: string;
  /** Path and query string, e.g. `/api/address?id=adr_1`. */
  path: string;
  body?: unknown;
};

export type ApiResponse = {
  status: number;
  /** Parsed JSON when the response says it is JSON, the text otherwise (`null` for an empty body). */
  body: unknown;
  /** Size of the raw body in bytes. */
  bytes: number;
  /** The seconds a `Retry-After` header asks for (429, 503), when the answer has one. */
  retryAfterSeconds?: number;
};

/**
 * Why a request got no HTTP answer at all (refused connection, timeout, oversized body): not an API error.
 * `sent`: the whole request went out before the answer failed to come, so the API may have carried it out.
 */
export class NetworkError extends Error {
  constructor(
    message: string,
    readonly sent = false,
  ) {
    super(message);
  }
}

export type ApiRequester = (request: ApiRequest) => Promise<ApiResponse>;

/** Bodies beyond this are refused: the result store could not keep them anyway. */
const MAX_RESPONSE_BYTES = 50 * 1024 * 1024;

/**
 * A requester bound to one site: every request carries the key and the site's own Host header.
 *
 * The API picks the tenant from the Host header, and `*.localhost` names often do not resolve through DNS, so for
 * `localhost` and `*.localhost` it connects to 127.0.0.1 while still sending the original Host. That is why this
 * uses node:http rather than fetch, which forbids setting Host.
 * Rejects with NetworkError when no complete HTTP response arrives; any HTTP status resolves.
 */
export function createApiRequester(origin: URL, apiKey: string, timeoutMs: number): ApiRequester {
  const secure = origin.protocol === 'https:';
  const hostname = origin.hostname.replace(/^\[(.*)\]$/, '$1');
  const connectTo = hostname === 'localhost' || hostname.endsWith('.localhost') ? '127.0.0.1' : hostname;
  const port = origin.port ? Number(origin.port) : secure ? 443 : 80;
  const send = secure ? httpsRequest : httpRequest;

  return ({ method, path, body }) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {
      host: origin.host,
      accept: 'application/json',
      'user-agent': 'dispatch-mcp/0.1.0',
      'x-api-key': apiKey,
      ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
    };
    return new Promise<ApiResponse>((resolve, reject) => {
      const req = send(
        // servername keeps TLS certificate checks on the real name even when connecting to 127.0.0.1.
        { host: connectTo, port, method, path, headers, timeout: timeoutMs, ...(secure ? { servername: hostname } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          let bytes = 0;
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (bytes > MAX_RESPONSE_BYTES) {
              req.destroy(new NetworkError(`${method} ${path}: response larger than ${MAX_RESPONSE_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', (error) => reject(toNetworkError(method, path, error)));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const retryAfter = Number(res.headers['retry-after']);
            resolve({ status: res.statusCode ?? 0, body: parseBody(text, res.headers), bytes, ...(Number.isFinite(retryAfter) && res.headers['retry-after'] ? { retryAfterSeconds: retryAfter } : {}) });
          });
        },
      );
      // An agent waiting forever on a hung server is worse than an error; one sent in full may have been carried out.
      req.on('timeout', () => req.destroy(new NetworkError(`${method} ${path}: no complete answer within ${timeoutMs} ms`, req.writableFinished)));
      req.on('error', (error) => reject(toNetworkError(method, path, error)));
      req.end(payload);
    });
  };
}

function parseBody(text: string, headers: IncomingHttpHeaders): unknown {
  if (!text) return null;
  if (!headers['content-type']?.includes('json')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // A body that claims JSON but is not: hand the text back rather than failing the whole call.
    return text;
  }
}

function toNetworkError(method: string, path: string, error: Error): NetworkError {
  if (error instanceof NetworkError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new NetworkError(`${method} ${path} failed: ${code ? `${code} ` : ''}${error.message}`);
}
