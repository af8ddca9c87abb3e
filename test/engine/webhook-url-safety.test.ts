import { describe, expect, it, vi } from 'vitest';
import {
  assertPublicWebhookUrl,
  classifyAddress,
  UnsafeWebhookUrlError,
  type HostLookup,
  type WebhookUrlRejection,
} from '../../engine/webhooks/url-safety.ts';

/** A resolver that knows a few names and nothing else, so no test touches the network. */
const HOSTS: Record<string, string[]> = {
  'example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'rebind.example': ['127.0.0.1'],
  'mixed.example': ['93.184.216.34', '10.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'v6-private.example': ['2606:2800:220:1::1', 'fd12:3456::1'],
  'mapped.example': ['::ffff:127.0.0.1'],
};
const lookup: HostLookup = async (name) => {
  const addresses = HOSTS[name];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const check = (url: string, allowLoopback = false) => assertPublicWebhookUrl(url, { allowLoopback, lookup });

const empty: HostLookup = async () => [];
const hanging: HostLookup = () => new Promise(() => {});

/** The refusal reason, or 'accepted'; anything thrown that is not a refusal fails the test. */
async function reasonFor(url: string, allowLoopback = false): Promise<WebhookUrlRejection | 'accepted'> {
  const error = await check(url, allowLoopback).then(() => null, (thrown: unknown) => thrown);
  if (error === null) return 'accepted';
  if (!(error instanceof UnsafeWebhookUrlError)) throw error;
  return error.reason;
}

describe('assertPublicWebhookUrl', () => {
  it('accepts public literals and names whose every address is public, returning the canonical URL', async () => {
    expect((await check('https://93.184.216.34/hook')).href).toBe('https://93.184.216.34/hook');
    expect((await check('https://Example.COM/hook?x=1')).href).toBe('https://example.com/hook?x=1');
    expect((await check('https://[2606:4700:4700::1111]:8443/hook')).hostname).toBe('[2606:4700:4700::1111]');
    // Shorthand IPv4 is written out, so what is stored and dialled is what was checked.
    expect((await check('https://0x5db8d822/hook')).href).toBe('https://93.184.216.34/hook');
  });

  it.each([
    ['http://93.184.216.34/hook', 'not_https'],
    ['ftp://example.com/hook', 'not_https'],
    ['not a url', 'invalid_url'],
    ['https://', 'invalid_url'],
    ['https://user:pass@example.com/hook', 'credentials'],
    ['https://example.com@127.0.0.1/hook', 'credentials'],
    ['https://localhost/hook', 'localhost_name'],
    ['https://LOCALHOST./hook', 'localhost_name'],
    ['https://api.localhost/hook', 'localhost_name'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://2130706433/hook', 'loopback'],
    ['https://0x7f000001/hook', 'loopback'],
    ['https://127.1/hook', 'loopback'],
    ['https://0177.0.0.1/hook', 'loopback'],
    ['https://[::1]/hook', 'loopback'],
    ['https://[::ffff:127.0.0.1]/hook', 'ipv4_mapped'],
    ['https://[::ffff:7f00:1]/hook', 'ipv4_mapped'],
    ['https://[::ffff:93.184.216.34]/hook', 'ipv4_mapped'],
    ['https://[::127.0.0.1]/hook', 'ipv4_embedded'],
    ['https://[64:ff9b::7f00:1]/hook', 'ipv4_embedded'],
    ['https://[2002:7f00:1::1]/hook', 'ipv4_embedded'],
    ['https://[2001:0:4136:e378::1]/hook', 'ipv4_embedded'],
    ['https://10.1.2.3/hook', 'private'],
    ['https://172.31.255.255/hook', 'private'],
    ['https://192.168.0.10/hook', 'private'],
    ['https://169.254.169.254/latest/meta-data/', 'link_local'],
    ['https://[fe80::1]/hook', 'link_local'],
    ['https://100.64.0.1/hook', 'carrier_grade_nat'],
    ['https://[fd00::1]/hook', 'unique_local'],
    ['https://0.0.0.0/hook', 'unspecified'],
    ['https://[::]/hook', 'unspecified'],
    ['https://255.255.255.255/hook', 'broadcast'],
    ['https://239.1.1.1/hook', 'multicast'],
    ['https://192.0.2.7/hook', 'reserved'],
    ['https://[2001:db8::1]/hook', 'reserved'],
    ['https://[100::1]/hook', 'reserved'],
    ['https://rebind.example/hook', 'loopback'],
    ['https://mixed.example/hook', 'private'],
    ['https://metadata.example/hook', 'link_local'],
    ['https://v6-private.example/hook', 'unique_local'],
    ['https://mapped.example/hook', 'ipv4_mapped'],
    ['https://no-such-host.invalid/hook', 'unresolvable'],
  ] as const)('refuses %s (%s)', async (url, reason) => {
    await expect(check(url)).rejects.toMatchObject({ status: 400, code: 'INVALID_WEBHOOK_URL', field: 'url', reason, details: { reason } });
  });

  it('names the host and the reason but never echoes a resolved address', async () => {
    await expect(check('https://rebind.example/x')).rejects.toThrow('Webhook URL host rebind.example resolves to a loopback address');
    await expect(check('https://rebind.example/x')).rejects.not.toThrow('127.0.0.1');
    await expect(check('https://10.0.0.1/x')).rejects.toMatchObject({ details: { reason: 'private' } });
  });

  it('refuses localhost by name without asking the resolver', async () => {
    const spy = vi.fn<HostLookup>(lookup);
    await expect(assertPublicWebhookUrl('https://localhost/x', { allowLoopback: false, lookup: spy })).rejects.toMatchObject({ reason: 'localhost_name' });
    expect(spy).not.toHaveBeenCalled();
  });

  it('calls a host unresolvable when the resolver returns nothing or hangs', async () => {
    await expect(assertPublicWebhookUrl('https://empty.example/', { allowLoopback: false, lookup: empty })).rejects.toMatchObject({ reason: 'unresolvable' });
    await expect(assertPublicWebhookUrl('https://slow.example/', { allowLoopback: false, lookup: hanging, lookupTimeoutMs: 20 })).rejects.toMatchObject({
      reason: 'unresolvable',
      message: expect.stringContaining('does not resolve'),
    });
  });

  it('with allowLoopback lets loopback addresses through, and nothing else', async () => {
    expect(await reasonFor('https://127.0.0.1:8443/hook', true)).toBe('accepted');
    expect(await reasonFor('https://[::1]:8443/hook', true)).toBe('accepted');
    expect(await reasonFor('https://rebind.example/hook', true)).toBe('accepted');
    expect(await reasonFor('http://127.0.0.1:8443/hook', true)).toBe('not_https');
    expect(await reasonFor('https://localhost:8443/hook', true)).toBe('localhost_name');
    expect(await reasonFor('https://[::ffff:127.0.0.1]/hook', true)).toBe('ipv4_mapped');
    expect(await reasonFor('https://10.0.0.1/hook', true)).toBe('private');
    expect(await reasonFor('https://169.254.169.254/hook', true)).toBe('link_local');
  });

  it('classifies resolver output that is not an address at all as non-public', () => {
    expect(classifyAddress('not-an-ip', false)).toBe('non_public');
    expect(classifyAddress('fe80::1%eth0', false)).toBe('link_local');
    expect(classifyAddress('8.8.8.8', false)).toBeNull();
  });
});
