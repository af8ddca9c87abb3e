/**
 * A sample webhook receiver for the dispatch API.
 *
 *   SECRET=<the subscription's secret_key> PORT=8443 TLS_CERT=cert.pem TLS_KEY=key.pem \
 *     node --import tsx examples/webhook-receiver.ts
 *
 * Without TLS_CERT/TLS_KEY it serves plain HTTP, for use behind a TLS-terminating proxy (the API only delivers to
 * https URLs). For each request it: limits the body to 1 MiB; checks X-Webhook-Signature (hex HMAC-SHA256 of the
 * raw body) in constant time BEFORE parsing anything, answering 401 when it is missing or wrong; skips an event id
 * (the webhook-id header) it has already processed; prints the event; answers 204.
 *
 * The same requests also carry Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature), so a
 * Standard Webhooks library works too: `new Webhook('whsec_' + base64(utf8(secret))).verify(rawBody, headers)`,
 * which also rejects replays older than five minutes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';

const MAX_BODY_BYTES = 1024 * 1024;
/** Event ids remembered for deduplication. A real receiver stores them durably, with the effect of the event. */
const REMEMBERED_IDS = 10_000;

const secret = process.env.SECRET ?? '';
const port = Number(process.env.PORT ?? 8443);
if (secret === '') {
  process.stderr.write('SECRET is required: the subscription secret_key the deliveries are signed with\n');
  process.exit(1);
}

const seen = new Set<string>();

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') return reply(res, 405);
  const body = await readBody(req);
  if (body === null) return reply(res, 413);
  if (!signatureMatches(req.headers['x-webhook-signature'], body)) return reply(res, 401);

  const eventId = String(req.headers['webhook-id'] ?? '');
  if (eventId !== '' && seen.has(eventId)) return reply(res, 204);
  let event: { id?: string; event?: string; timestamp?: string; data?: unknown };
  try {
    event = JSON.parse(body.toString('utf8')) as typeof event;
  } catch {
    return reply(res, 400);
  }
  // "Processing": print it. Acknowledge only after the event is handled or stored, so a crash here means a retry.
  process.stdout.write(`${JSON.stringify({ received_at: new Date().toISOString(), ...event })}\n`);
  remember(eventId || String(event.id ?? ''));
  reply(res, 204);
}

/** The raw body, or null once it passes the limit (the rest is not read). */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Constant-time comparison of the received hex signature with the expected one; a malformed header fails. */
function signatureMatches(header: string | string[] | undefined, body: Buffer): boolean {
  if (typeof header !== 'string' || !/^[0-9a-f]{64}$/.test(header)) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest();
  return timingSafeEqual(Buffer.from(header, 'hex'), expected);
}

function remember(eventId: string): void {
  if (eventId === '') return;
  seen.add(eventId);
  // A Set iterates in insertion order: drop the oldest.
  if (seen.size > REMEMBERED_IDS) seen.delete(seen.values().next().value!);
}

function reply(res: ServerResponse, status: number): void {
  // After a refused body the rest is not read: close the connection rather than keep it alive.
  if (status === 413) res.setHeader('connection', 'close');
  res.writeHead(status).end();
}

const listener = (req: IncomingMessage, res: ServerResponse) => {
  handle(req, res).catch(() => {
    if (!res.headersSent) reply(res, 500);
  });
};
const tls = process.env.TLS_CERT && process.env.TLS_KEY
  ? { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) }
  : null;
const server = tls ? createHttpsServer(tls, listener) : createHttpServer(listener);
server.listen(port, () => process.stderr.write(`webhook receiver on ${tls ? 'https' : 'http'}://0.0.0.0:${port}\n`));
