import { describe, expect, it } from 'vitest';
import { CredentialCache } from '../../http/auth/credential-cache.ts';
import type { Principal } from '../../http/auth/principal.ts';

const principal: Principal = {
  kind: 'api_key', siteId: 'sit_a', userId: 'usr_a', role: 'admin', profileId: null, applicationId: 'app_a', accessTokenId: null, sessionId: null, expiresAt: null,
};

/** A load the test settles by hand, counting how often it was started. */
function manualLoad() {
  let settle: { resolve(p: Principal): void; reject(e: Error): void } | undefined;
  const load = { starts: 0, run: () => new Promise<Principal>((resolve, reject) => { load.starts += 1; settle = { resolve, reject }; }), settle: () => settle! };
  return load;
}

describe('credential cache', () => {
  it('lets concurrent misses share one load, then answers from the cache without loading', async () => {
    const cache = new CredentialCache(null, null, 'test');
    const load = manualLoad();
    const waiting = Array.from({ length: 50 }, () => cache.resolve('hash', 'sit_a', load.run));
    load.settle().resolve(principal);
    expect(await Promise.all(waiting)).toEqual(Array.from({ length: 50 }, () => principal));
    expect(load.starts).toBe(1);
    expect(cache.cached('hash')).toBe(principal);
  });

  it('shares loads per host: the same credential on another host loads on its own', async () => {
    const cache = new CredentialCache(null, null, 'test');
    const load = manualLoad();
    void cache.resolve('hash', 'sit_a', load.run);
    void cache.resolve('hash', 'sit_b', load.run);
    expect(load.starts).toBe(2);
  });

  it('does not cache a load that began before an invalidation, nor a failed load', async () => {
    const cache = new CredentialCache(null, null, 'test');
    const before = manualLoad();
    const waiting = cache.resolve('hash', 'sit_a', before.run);
    await cache.invalidate();
    before.settle().resolve(principal);
    expect(await waiting).toBe(principal);
    expect(cache.cached('hash')).toBeUndefined();

    const failing = manualLoad();
    const refused = cache.resolve('hash', 'sit_a', failing.run);
    failing.settle().reject(new Error('revoked'));
    await expect(refused).rejects.toThrow('revoked');
    const again = manualLoad();
    void cache.resolve('hash', 'sit_a', again.run);
    expect(again.starts).toBe(1);
  });

  it('computes a credential\'s context once for concurrent callers and serves it synchronously after', async () => {
    const cache = new CredentialCache(null, null, 'test');
    cache.set('hash', principal);
    let computations = 0;
    const compute = async () => ({ n: ++computations });
    const [first, second] = await Promise.all([cache.remembered('hash', compute), cache.remembered('hash', compute)]);
    expect(first).toBe(second);
    expect(computations).toBe(1);
    expect(cache.computed('hash')).toEqual({ n: 1 });
    await cache.invalidate();
    expect(cache.computed('hash')).toBeUndefined();
  });
});
