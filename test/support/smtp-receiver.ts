import type { AddressInfo } from 'node:net';
import type { ApiClient } from './http-client.ts';
import { SMTPServer } from 'smtp-server';

export type ReceivedMail = { from: string; to: string[]; raw: string };

export type SmtpReceiver = {
  port: number;
  received: ReceivedMail[];
  /** Refuse the next `count` messages with a temporary error (451), as a busy server would. */
  refuseNext(count: number): void;
  close(): Promise<void>;
};

/**
 * A real SMTP server on loopback (smtp-server) that requires a login and keeps what it receives. STARTTLS is off so
 * the client needs no certificate; login over plain text is allowed for that reason only.
 */
export async function startSmtpReceiver(credentials: { username: string; password: string }): Promise<SmtpReceiver> {
  const received: ReceivedMail[] = [];
  let refusals = 0;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.username && auth.password === credentials.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (refusals > 0) {
          refusals -= 1;
          const error = new Error('Try again later') as Error & { responseCode: number };
          error.responseCode = 451;
          callback(error);
          return;
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        received.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    received,
    refuseNext: (count) => {
      refusals = count;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A receiver on loopback connected as `site`'s SMTP integration (the server must allow loopback targets:
 * `WEBHOOK_ALLOW_LOOPBACK`), so the site's mail goes through a real provider and is queued, not written to the
 * development mailbox.
 */
export async function connectSmtpReceiver(site: { as: { admin: ApiClient } }, password: string): Promise<SmtpReceiver> {
  const smtp = await startSmtpReceiver({ username: 'dispatch', password });
  const connected = await site.as.admin.post('/api/integration/connect', {
    integration_key: 'smtp',
    config: { host: '127.0.0.1', port: smtp.port, username: 'dispatch', password, from_address: 'dispatch@acme.example' },
  });
  if (connected.status !== 200) throw new Error(`SMTP connect failed: ${connected.status} ${connected.text}`);
  return smtp;
}
