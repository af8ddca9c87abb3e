import { getRequestIP, type H3Event } from 'h3';

/**
 * The caller's address, the key of the anonymous rate limit. Behind trusted proxies (`TRUST_PROXY`, `hops` of them
 * appending to X-Forwarded-For, `TRUST_PROXY_HOPS`) it is the entry the outermost of them wrote: the address that
 * proxy saw. Entries to its left came from the client, who can send any it likes (h3's `getRequestIP` takes the
 * leftmost, so a new made-up address per request was a fresh quota); entries to its right are our own proxies'
 * (counting the rightmost with two proxies made every caller share the first proxy's address). `hops` 0: no proxy
 * is trusted, the connection's address counts.
 */
export function clientIp(event: H3Event, hops: number): string {
  return addressOf(event.req.headers.get('x-forwarded-for'), getRequestIP(event), hops);
}

/** The same rule from the header's text and the connection's own address (a socket.io handshake has no H3Event). */
export function addressOf(forwardedFor: string | null | undefined, connection: string | undefined, hops: number): string {
  if (hops > 0 && forwardedFor) {
    // Several X-Forwarded-For headers arrive joined with ", ", our proxies' own last.
    const entries = forwardedFor.split(',').map((entry) => entry.trim());
    const seen = entries.at(-hops);
    if (seen) return seen;
  }
  return connection ?? 'unknown';
}

/** The proxies to trust for the client's address, from the configuration: none unless `TRUST_PROXY` is on. */
export const trustedHops = (config: { trustProxy: boolean; trustedProxyHops: number }): number => (config.trustProxy ? config.trustedProxyHops : 0);

/** The rate-limit key of a caller without a (valid) credential, REST or socket: its address. */
export const anonymousQuotaKey = (address: string): string => `ip:${address}`;

/**
 * A refusal of the host's site (404 SITE_NOT_FOUND) or of the credential (401): the steps before the limiter, each a
 * database query that is never cached, so such a refusal is charged to the address's anonymous quota.
 */
export const isUnidentified = (status: number): boolean => status === 401 || status === 404;
