import { getRequestIP, type H3Event } from 'h3';

/**
 * The caller's address, the key of the anonymous rate limit. Behind a trusted proxy (`TRUST_PROXY`) it is the
 * rightmost X-Forwarded-For entry: the address that proxy saw. Entries to its left came from the client, who can
 * send any it likes (h3's `getRequestIP` takes the leftmost, so a new made-up address per request was a fresh quota).
 */
export function clientIp(event: H3Event, trustProxy: boolean): string {
  return addressOf(event.req.headers.get('x-forwarded-for'), getRequestIP(event), trustProxy);
}

/** The same rule from the header's text and the connection's own address (a socket.io handshake has no H3Event). */
export function addressOf(forwardedFor: string | null | undefined, connection: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    // Several X-Forwarded-For headers arrive joined with ", ", the proxy's own last.
    const forwarded = forwardedFor?.split(',').at(-1)?.trim();
    if (forwarded) return forwarded;
  }
  return connection ?? 'unknown';
}
