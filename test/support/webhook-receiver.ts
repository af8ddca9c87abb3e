import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A self-signed certificate for 127.0.0.1, made once per test process with the openssl CLI. */
export type TestCertificate = { certPath: string; cert: string; key: string };

let certificate: TestCertificate | null = null;

export function testCertificate(): TestCertificate {
  if (certificate) return certificate;
  const dir = mkdtempSync(path.join(tmpdir(), 'webhook-cert-'));
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', keyPath, '-out', certPath,
  ], { stdio: 'ignore' });
  certificate = { certPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  return certificate;
}

export type ReceivedRequest = { path: string; headers: IncomingHttpHeaders; body: Buffer; at: number; status: number };

/** What the receiver answers to one request: a status (and headers), after an optional delay; `hang` never answers. */
export type Reply = { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang';

export type WebhookReceiver = {
  port: number;
  /** `https://127.0.0.1:<port><path>` */
  url(path?: string): string;
  /** Every request, in arrival order, with the status it was answered (0 while hanging). */
  received: ReceivedRequest[];
  /** Decides each reply; defaults to 204. Replace it at any time. */
  reply: (request: { path: string; headers: IncomingHttpHeaders; body: Buffer; count: number }) => Reply;
  close(): Promise<void>;
};

/** A real HTTPS webhook receiver on loopback, recording everything it gets. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const { cert, key } = testCertificate();
  const received: ReceivedRequest[] = [];
  let server: Server;
  const receiver: WebhookReceiver = {
    port: 0,
    url: (urlPath = '/hook') => `https://127.0.0.1:${receiver.port}${urlPath}`,
    received,
    reply: () => ({ status: 204 }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server = createServer({ cert, key, keepAliveTimeout: 5000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry: ReceivedRequest = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: Date.now(), status: 0 };
      received.push(entry);
      const reply = receiver.reply({ path: entry.path, headers: entry.headers, body: entry.body, count: received.length });
      if (reply === 'hang') return;
      const send = () => {
        entry.status = reply.status;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end();
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}
