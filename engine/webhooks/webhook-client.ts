import { request } from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createSecureContext } from 'node:tls';
import { RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { parseRetryAfter } from './retry-policy.ts';

export type WebhookClientOptions = {
  /** Deadline of one request, from connecting to the response status line (ms). */
  timeoutMs: number;
  /**
   * Test-only (config.webhookAllowLoopback): lets 127.0.0.0/8 and ::1 through the address filter so a test receiver
   * on this machine can be reached. Every other private, link-local or reserved address stays blocked.
   */
  allowLoopback: boolean;
  /** Certificates to trust instead of the system's (a test receiver's self-signed certificate). */
  ca?: string;
  /** Replaces DNS resolution (tests simulate an unknown host); the address it returns is still filtered. */
  lookup?: LookupFunction;
  /** Response body bytes read before the connection is dropped. Default 16 KiB. */
  maxResponseBytes?: number;
};

/** What one POST came to: a response (any status), or no response at all (with the error's code). */
export type PostResult =
  | { kind: 'response'; status: number; retryAfterMs: number | null; durationMs: number }
  | { kind: 'error'; code: string; message: string; durationMs: number };

export type WebhookClient = {
  /** POSTs `body` to an `https:` URL; never throws: failures come back as `{kind: 'error'}`. */
  post(url: string, body: Buffer, headers: Record<string, string>): Promise<PostResult>;
  /** Closes idle keep-alive connections. */
  close(): void;
};

/** The code given to a connection refused by the address filter (the library's error has none). */
export const BLOCKED_ADDRESS = 'EBLOCKEDADDRESS';

const USER_AGENT = 'dispatch-webhooks/1';

/**
 * An HTTPS client for webhook delivery. It uses `node:https` with `request-filtering-agent`, which checks the address
 * each connection actually goes to (after DNS), so a host that resolves to a private address, or is re-pointed there
 * after the URL was checked (DNS rebinding), is refused at connect time. Redirects are not followed (node:https never
 * does): a 3xx is just a non-2xx status. Response bodies are read up to a small limit and thrown away; connections
 * are kept alive between deliveries.
 */
export function createWebhookClient(options: WebhookClientOptions): WebhookClient {
  const maxResponseBytes = options.maxResponseBytes ?? 16 * 1024;
  const agent = new RequestFilteringHttpsAgent({
    keepAlive: true,
    maxSockets: 64,
    allowIPAddressList: options.allowLoopback ? ['127.0.0.0/8', '::1'] : [],
    // One secure context built from the test CA, rather than `ca` itself: https.Agent puts a `ca` string into the
    // name it files every request's socket under, so each POST would copy and hash the whole PEM.
    ...(options.ca ? { secureContext: createSecureContext({ ca: options.ca }) } : {}),
  });

  const post = (url: string, body: Buffer, headers: Record<string, string>): Promise<PostResult> => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve({ kind: 'error', code: 'EINVALIDURL', message: 'the URL cannot be parsed', durationMs: 0 });
    }
    if (target.protocol !== 'https:') {
      return Promise.resolve({ kind: 'error', code: 'EINVALIDURL', message: 'webhook URLs must use https', durationMs: 0 });
    }
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: PostResult) => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          ...(options.lookup ? { lookup: options.lookup } : {}),
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length), 'user-agent': USER_AGENT },
        },
        (res) => {
          // The status decides the outcome; the body only has to be drained (to reuse the connection) or cut off.
          finish({ kind: 'response', status: res.statusCode ?? 0, retryAfterMs: parseRetryAfter(res.headers['retry-after'], Date.now()), durationMs: elapsed() });
          let received = 0;
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received > maxResponseBytes) res.destroy();
          });
          res.on('error', () => undefined);
          res.on('close', () => clearTimeout(timer));
        },
      );
      const timer = setTimeout(() => {
        req.destroy(Object.assign(new Error(`no response within ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
      }, options.timeoutMs);
      req.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        finish({ kind: 'error', code: errorCode(error), message: error.message.slice(0, 500), durationMs: elapsed() });
      });
      req.end(body);
    });
  };

  return { post, close: () => agent.destroy() };
}

function errorCode(error: NodeJS.ErrnoException): string {
  if (error.code) return error.code;
  // request-filtering-agent refuses with a plain Error ("... is not allowed. Because, It is private IP address.").
  if (/is not allowed/.test(error.message)) return BLOCKED_ADDRESS;
  return 'ERROR';
}
