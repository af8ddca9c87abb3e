import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress, WEBHOOK_URL_REJECTIONS, type WebhookUrlRejection } from '../webhooks/url-safety.ts';
import { isMappingProviderError, mappingProviderError } from './provider-error.ts';

/**
 * Which addresses a site's mapping engine may live at. A site admin sets `base_url`, and the platform dials it and
 * quotes the answer in errors, so by default only public addresses are allowed, like webhooks and SMTP: a tenant
 * must not reach the platform's own network. An operator whose OSRM runs beside the platform (the usual self-hosted
 * setup) turns on `allowPrivateNetworks` (MAPPING_ALLOW_PRIVATE_NETWORKS); link-local addresses (cloud metadata
 * endpoints) stay refused even then.
 */
export type MappingNetworkPolicy = {
  /** Loopback only (tests' local engines): WEBHOOK_ALLOW_LOOPBACK. */
  allowLoopback: boolean;
  /** Private, unique-local, CGNAT and loopback addresses: MAPPING_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: boolean;
};

export const PUBLIC_ONLY: MappingNetworkPolicy = { allowLoopback: false, allowPrivateNetworks: false };

const PRIVATE_RANGES: ReadonlySet<WebhookUrlRejection> = new Set(['private', 'unique_local', 'carrier_grade_nat', 'loopback']);

/**
 * Checks every address `url`'s host resolves to before the engine is dialled. It does not stop DNS rebinding
 * between this lookup and the connection; it keeps honest misconfiguration and casual probing out.
 *
 * @throws DomainError 502 MAPPING_PROVIDER_ERROR naming the kind of address refused (never the address itself)
 */
export async function assertAllowedEngineHost(url: URL, policy: MappingNetworkPolicy, provider: string, signal: AbortSignal): Promise<void> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const addresses = isIP(host) ? [host] : await resolve(host, provider, signal);
  for (const address of addresses) {
    const reason = classifyAddress(address, policy.allowLoopback || policy.allowPrivateNetworks);
    if (reason === null || (policy.allowPrivateNetworks && PRIVATE_RANGES.has(reason))) continue;
    const hint = PRIVATE_RANGES.has(reason) ? ' (set MAPPING_ALLOW_PRIVATE_NETWORKS to allow engines on private networks)' : '';
    throw mappingProviderError(provider, `base_url host ${host} is ${WEBHOOK_URL_REJECTIONS[reason]}${hint}`);
  }
}

async function resolve(host: string, provider: string, signal: AbortSignal): Promise<string[]> {
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(mappingProviderError(provider, `base_url host ${host} did not resolve in time`));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  // When the lookup wins, the timeout still fires later: nobody waits for it then.
  aborted.catch(() => undefined);
  try {
    const records = await Promise.race([lookup(host, { all: true, verbatim: true }), aborted]);
    return records.map((r) => r.address);
  } catch (error) {
    if (isMappingProviderError(error)) throw error;
    throw mappingProviderError(provider, `base_url host ${host} does not resolve`);
  }
}
