import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../domain-error.ts';

/**
 * Why a webhook URL is refused, with the phrase used in the error message. Shared with delivery, which reports the
 * same reasons when it deactivates a subscription whose host went bad.
 */
export const WEBHOOK_URL_REJECTIONS = {
  invalid_url: 'is not a valid absolute URL',
  not_https: 'must use https',
  credentials: 'must not carry a user name or password',
  localhost_name: 'names the local host',
  unresolvable: 'does not resolve',
  loopback: 'a loopback address',
  private: 'a private network address',
  link_local: 'a link-local address (cloud metadata endpoints live here)',
  unique_local: 'an IPv6 unique-local address',
  carrier_grade_nat: 'a carrier-grade NAT address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  reserved: 'a reserved or documentation address',
  ipv4_mapped: 'an IPv4-mapped IPv6 address',
  ipv4_embedded: 'an IPv6 address embedding an IPv4 one (6to4, Teredo, NAT64, IPv4-compatible)',
  non_public: 'not a public unicast address',
} as const;

export type WebhookUrlRejection = keyof typeof WEBHOOK_URL_REJECTIONS;

/** 400 INVALID_WEBHOOK_URL on the field `url`; `details.reason` is one of {@link WEBHOOK_URL_REJECTIONS}. */
export class UnsafeWebhookUrlError extends DomainError {
  constructor(
    readonly reason: WebhookUrlRejection,
    message: string,
  ) {
    super(400, 'INVALID_WEBHOOK_URL', message, 'url', { reason });
  }
}

/** Resolves a host name to every address it has (A and AAAA); the shape of `dns.promises.lookup(name, {all: true})`. */
export type HostLookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export type UrlSafetyOptions = {
  /** Lets loopback addresses (127.0.0.0/8, ::1) through, for tests' local receivers; never names such as `localhost`. */
  allowLoopback: boolean;
  lookup?: HostLookup;
  /** Gives up on a lookup after this long and calls the host unresolvable. */
  lookupTimeoutMs?: number;
};

const DEFAULT_LOOKUP_TIMEOUT_MS = 5000;

/**
 * Registration-time check that a webhook URL points at the public internet: https, no credentials, and a host that
 * is a public unicast address or a name whose every A/AAAA record is one. It does not stop DNS rebinding (the name
 * may change later); delivery re-checks each connection's address for that.
 * @returns the URL as the WHATWG parser canonicalised it (IPv4 shorthand such as `0x7f000001` written out)
 * @throws UnsafeWebhookUrlError naming the reason
 */
export async function assertPublicWebhookUrl(raw: string, options: UrlSafetyOptions): Promise<URL> {
  const url = URL.canParse(raw) ? new URL(raw) : refuse('invalid_url', `Webhook URL ${WEBHOOK_URL_REJECTIONS.invalid_url}`);
  if (url.protocol !== 'https:') refuse('not_https', `Webhook URL must use https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username !== '' || url.password !== '') refuse('credentials', `Webhook URL ${WEBHOOK_URL_REJECTIONS.credentials}`);
  // The parser already turned decimal, hex, octal and short IPv4 forms into dotted quads and brackets IPv6.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') refuse('invalid_url', `Webhook URL ${WEBHOOK_URL_REJECTIONS.invalid_url}`);
  if (isIP(host) !== 0) {
    const reason = classifyAddress(host, options.allowLoopback);
    if (reason) refuse(reason, `Webhook URL host ${host} is ${WEBHOOK_URL_REJECTIONS[reason]}`);
    return url;
  }
  const name = host.replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    refuse('localhost_name', `Webhook URL host ${name} ${WEBHOOK_URL_REJECTIONS.localhost_name}`);
  }
  const addresses = await resolveAll(name, options.lookup ?? defaultLookup, options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS);
  if (addresses.length === 0) refuse('unresolvable', `Webhook URL host ${name} ${WEBHOOK_URL_REJECTIONS.unresolvable}`);
  for (const address of addresses) {
    const reason = classifyAddress(address, options.allowLoopback);
    // The address itself is not echoed: it would map a tenant's guesses onto the platform's internal network.
    if (reason) refuse(reason, `Webhook URL host ${name} resolves to ${WEBHOOK_URL_REJECTIONS[reason]}`);
  }
  return url;
}

/**
 * Why an IP address is not a public unicast target, or null when it is one. IPv6 must also lie in 2000::/3, the
 * only block allocated for global unicast, so ranges ipaddr.js does not name (IPv4-compatible `::a.b.c.d`) fail too.
 */
export function classifyAddress(address: string, allowLoopback: boolean): WebhookUrlRejection | null {
  if (!ipaddr.isValid(address)) return 'non_public';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') {
    const range: string = parsed.range();
    if (range === 'unicast') return null;
    if (range === 'loopback' && allowLoopback) return null;
    return IPV4_REASONS[range] ?? 'non_public';
  }
  const v6 = parsed as ipaddr.IPv6;
  const range: string = v6.range();
  if (range === 'loopback' && allowLoopback) return null;
  if (range === 'unicast') {
    if (v6.match(GLOBAL_UNICAST)) return null;
    // ::/96 held the deprecated IPv4-compatible form; the stack may route it to the embedded IPv4 address.
    return v6.match(IPV4_COMPATIBLE) ? 'ipv4_embedded' : 'non_public';
  }
  return IPV6_REASONS[range] ?? 'non_public';
}

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

const IPV4_REASONS: Record<string, WebhookUrlRejection> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link_local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier_grade_nat',
  private: 'private',
  reserved: 'reserved',
};

const IPV6_REASONS: Record<string, WebhookUrlRejection> = {
  unspecified: 'unspecified',
  linkLocal: 'link_local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique_local',
  deprecatedSiteLocal: 'private',
  ipv4Mapped: 'ipv4_mapped',
  rfc6145: 'ipv4_embedded',
  rfc6052: 'ipv4_embedded',
  '6to4': 'ipv4_embedded',
  teredo: 'ipv4_embedded',
  reserved: 'reserved',
  benchmarking: 'reserved',
  discard: 'reserved',
};

const defaultLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true });

async function resolveAll(name: string, lookup: HostLookup, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
    timer.unref();
  });
  try {
    const records = await Promise.race([lookup(name), timeout]);
    return records ? records.map((r) => r.address) : [];
  } catch {
    // ENOTFOUND, EAI_AGAIN, ...: at registration a host that does not resolve is as good as absent.
    return [];
  } finally {
    clearTimeout(timer);
  }
}

function refuse(reason: WebhookUrlRejection, message: string): never {
  throw new UnsafeWebhookUrlError(reason, message);
}
