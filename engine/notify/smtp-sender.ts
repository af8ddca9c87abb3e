import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { createTransport as createNodemailerTransport } from 'nodemailer';
import { DomainError } from '../domain-error.ts';
import { classifyAddress } from '../webhooks/url-safety.ts';

/** The `smtp` provider's config (see its catalog entry), secrets decrypted. */
export type SmtpConfig = {
  host: string;
  port?: number;
  secure?: boolean;
  username?: string;
  password?: string;
  from_address: string;
  from_name?: string;
};

export type SmtpOptions = {
  /** Lets loopback SMTP servers through (tests' local server; WEBHOOK_ALLOW_LOOPBACK). */
  allowLoopback: boolean;
  /** Connection, greeting and socket timeouts (ms). Default 10 000. */
  timeoutMs?: number;
};

/**
 * `messageId`: the Message-ID header, with its angle brackets. Given the same one on a resend (see
 * {@link notificationMessageId}), receivers and MTAs can tell the copies are one message.
 */
export type OutgoingEmail = { to: string; subject: string; body: string; messageId?: string };

/** The Message-ID of a notification's mail, the same on every attempt: `<notification id@sender's domain>`. */
export function notificationMessageId(notificationId: string, fromAddress: string): string {
  const domain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1) || 'localhost';
  return `<${notificationId}@${domain}>`;
}

/**
 * Sends one message through the site's SMTP server. The host must resolve to public addresses only (a tenant's
 * config must not make the platform dial its own network), and the connection goes to the address that was
 * checked, with the name kept for TLS verification.
 * @returns the message id the server accepted
 * @throws DomainError 422 SMTP_HOST_NOT_ALLOWED; nodemailer's errors (connection, auth, rejection) as they come
 */
export async function sendSmtpMail(config: SmtpConfig, mail: OutgoingEmail, options: SmtpOptions): Promise<string> {
  const transport = await createTransport(config, options);
  try {
    const from = config.from_name ? { name: config.from_name, address: config.from_address } : config.from_address;
    const info = await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.body, ...(mail.messageId ? { messageId: mail.messageId } : {}) });
    return info.messageId;
  } finally {
    transport.close();
  }
}

/** Connects and logs in without sending: the connect flow's check. @throws as {@link sendSmtpMail} */
export async function verifySmtp(config: SmtpConfig, options: SmtpOptions): Promise<void> {
  const transport = await createTransport(config, options);
  try {
    await transport.verify();
  } finally {
    transport.close();
  }
}

async function createTransport(config: SmtpConfig, options: SmtpOptions) {
  const address = await publicAddress(config.host, options.allowLoopback);
  const timeout = options.timeoutMs ?? 10_000;
  return createNodemailerTransport({
    host: address,
    port: config.port ?? 587,
    secure: config.secure ?? false,
    ...(config.username ? { auth: { user: config.username, pass: config.password ?? '' } } : {}),
    ...(isIP(config.host) === 0 ? { tls: { servername: config.host } } : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    logger: false,
    debug: false,
  });
}

async function publicAddress(host: string, allowLoopback: boolean): Promise<string> {
  const name = host.replace(/\.$/, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) throw notAllowed(host);
  const addresses = isIP(name) !== 0 ? [name] : (await lookup(name, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) throw DomainError.unprocessable('SMTP_HOST_UNRESOLVABLE', `SMTP host ${host} does not resolve`);
  // The address is not echoed: it would map a tenant's guesses onto the platform's network.
  if (addresses.some((address) => classifyAddress(address, allowLoopback) !== null)) throw notAllowed(host);
  return addresses[0]!;
}

function notAllowed(host: string): DomainError {
  return DomainError.unprocessable('SMTP_HOST_NOT_ALLOWED', `SMTP host ${host} is not a public address`);
}
