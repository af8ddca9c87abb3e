import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * The webhook receiver, in a child process forked by webhook-receiver.ts: a receiver is another machine, so it gets
 * the second core rather than sharing the engine's event loop. An HTTPS server on 127.0.0.1 with a self-signed
 * certificate (made here with the openssl CLI, as test/support/webhook-receiver.ts does), answering 204 at once after
 * checking the body's `X-Webhook-Signature` (hex HMAC-SHA256 with the subscription secret, constant-time compare).
 *
 * Messages out: `{type: 'ready', port, cert}`, then batches `{type: 'arrivals', keys, at, bad}` every 20 ms, where
 * `keys[i]` is the `data.key` of a body, `at[i]` its arrival (wall clock, ms with a fraction) and `bad` the requests
 * whose signature did not match (they are answered 401 and not counted as arrivals).
 */
const send = process.send?.bind(process);
if (!send) throw new Error('webhook-receiver-process.ts must be forked with an IPC channel');
const secret = Buffer.from(process.env.BENCH_WEBHOOK_SECRET ?? '', 'utf8');
if (secret.length === 0) throw new Error('BENCH_WEBHOOK_SECRET is required');

const dir = mkdtempSync(path.join(tmpdir(), 'bench-webhook-cert-'));
const certPath = path.join(dir, 'cert.pem');
const keyPath = path.join(dir, 'key.pem');
execFileSync('openssl', [
  'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost',
  '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', keyPath, '-out', certPath,
], { stdio: 'ignore' });
const cert = readFileSync(certPath, 'utf8');
const key = readFileSync(keyPath, 'utf8');
rmSync(dir, { recursive: true, force: true });

/** Wall-clock milliseconds with sub-millisecond precision, comparable with the parent's `wallNow()`. */
const wallNow = (): number => performance.timeOrigin + performance.now();

let keys: string[] = [];
let at: number[] = [];
let bad = 0;

const server = createServer({ cert, key, keepAliveTimeout: 65_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const arrived = wallNow();
    const body = Buffer.concat(chunks);
    const sent = Buffer.from(String(req.headers['x-webhook-signature'] ?? ''), 'utf8');
    const expected = Buffer.from(createHmac('sha256', secret).update(body).digest('hex'), 'utf8');
    if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
      bad++;
      res.writeHead(401).end();
      return;
    }
    res.writeHead(204).end();
    const parsed = JSON.parse(body.toString('utf8')) as { data?: { key?: string } };
    keys.push(String(parsed.data?.key));
    at.push(arrived);
  });
});

const flush = setInterval(() => {
  if (keys.length === 0 && bad === 0) return;
  send({ type: 'arrivals', keys, at, bad });
  keys = [];
  at = [];
  bad = 0;
}, 20);

server.listen(0, '127.0.0.1', () => send({ type: 'ready', port: (server.address() as AddressInfo).port, cert }));
// The parent closing the channel (or dying) is the signal to stop.
process.on('disconnect', () => {
  clearInterval(flush);
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
