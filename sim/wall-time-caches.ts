import type { MikroORM } from '@mikro-orm/postgresql';
import type { Services } from '../app/services.ts';
import type { Principal } from '../http/auth/principal.ts';
import { CredentialCache } from '../http/auth/credential-cache.ts';
import { SiteDirectory } from '../http/tenancy.ts';

/**
 * The server's credential and site caches with their TTLs (30 s) counted in wall time, as on a live server.
 *
 * The request pipeline hands the caches the engine's clock, which in process is the virtual clock: a run going
 * 500× faster than real time would see every entry expire after ~60 ms of wall time, so nearly every simulated call
 * reloaded its site and principal (about 3.4 of the 18 SQL round trips per call) where a live server answers from
 * memory. Only the caches' notion of "how long ago" changes: the pipeline still checks the access token's expiry
 * against the virtual clock on every call (TOKEN_EXPIRED, then a refresh), and invalidations clear them at once.
 */
export function withWallTimeCaches(services: Services, dayStart: Date): Services {
  // The virtual day start plus the wall time elapsed: an entry lives 30 s of wall time. It may outlive its token's
  // virtual expiry in the cache, but `authenticate` refuses an expired token against the virtual clock all the same.
  const origin = performance.now();
  const cacheNow = () => dayStart.getTime() + (performance.now() - origin);
  return { ...services, credentials: new WallTimeCredentialCache(cacheNow), sites: new WallTimeSiteDirectory(services.db.orm, cacheNow) };
}

class WallTimeCredentialCache extends CredentialCache {
  constructor(private readonly cacheNow: () => number) {
    // One process and no Redis in process: invalidations are local.
    super(null, null, 'sim');
  }

  override get(tokenHash: string, _now: number) {
    return super.get(tokenHash, this.cacheNow());
  }

  override resolve(tokenHash: string, siteId: string | null, _now: number, load: () => Promise<Principal>): Promise<Principal> {
    return super.resolve(tokenHash, siteId, this.cacheNow(), load);
  }

  override set(tokenHash: string, principal: Principal, _now: number): void {
    super.set(tokenHash, principal, this.cacheNow());
  }

  override remembered<T>(tokenHash: string, _now: number, compute: () => Promise<T>): Promise<T> {
    return super.remembered(tokenHash, this.cacheNow(), compute);
  }
}

class WallTimeSiteDirectory extends SiteDirectory {
  constructor(
    orm: MikroORM,
    private readonly cacheNow: () => number,
  ) {
    super(orm);
  }

  override resolve(subdomain: string, _now: number) {
    return super.resolve(subdomain, this.cacheNow());
  }
}
