import { isIP } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { SiteSchema, type Site } from '../persistence/entities/site.entity.ts';
import { ApiError } from './errors.ts';

/** What a request's Host names: one site (by its subdomain, the Host's first label) or the platform. */
export type HostTarget = { kind: 'platform' } | { kind: 'site'; subdomain: string };

/**
 * `acme.dispatch.example` → site `acme` when BASE_DOMAIN is `dispatch.example`; `acme.localhost:3000` locally.
 * The bare base domain, an IP address, or no Host at all is the platform host.
 * @throws ApiError 404 SITE_NOT_FOUND for a host outside the base domain or with nested labels
 */
export function parseHost(host: string | null, baseDomain: string): HostTarget {
  const name = (host ?? '').trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  if (name === '' || name === baseDomain || isIP(name.replace(/^\[|\]$/g, '')) !== 0) return { kind: 'platform' };
  const suffix = `.${baseDomain}`;
  const label = name.endsWith(suffix) ? name.slice(0, -suffix.length) : '';
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label)) {
    throw new ApiError(404, 'SITE_NOT_FOUND', `No site is served at host ${name}`);
  }
  return { kind: 'site', subdomain: label };
}

const TTL_MS = 30_000;

/** Sites by subdomain, cached briefly; cleared whenever a site changes. */
export class SiteDirectory {
  private readonly cache = new Map<string, { site: Site; until: number }>();

  constructor(private readonly orm: MikroORM) {}

  /**
   * @throws ApiError 404 SITE_NOT_FOUND, 403 SITE_INACTIVE
   */
  async resolve(subdomain: string, now: number): Promise<Site> {
    const hit = this.cache.get(subdomain);
    const site = hit && hit.until > now ? hit.site : await this.load(subdomain, now);
    if (!site) throw new ApiError(404, 'SITE_NOT_FOUND', `No site has the subdomain ${subdomain}`);
    if (!site.isActive) throw new ApiError(403, 'SITE_INACTIVE', `Site ${subdomain} is deactivated`);
    return site;
  }

  invalidate(): void {
    this.cache.clear();
  }

  private async load(subdomain: string, now: number): Promise<Site | null> {
    const site = await this.orm.em.fork().findOne(SiteSchema, { subdomain });
    if (site) this.cache.set(subdomain, { site, until: now + TTL_MS });
    return site;
  }
}

/**
 * The Host's site, for operations declared `host: 'site'`: the pipeline refuses those on the platform host before
 * the handler runs, so a null here is a wiring bug, not a client error.
 */
export function requireSite<S extends { id: string }>(site: S | null): S {
  if (!site) throw new Error('a site operation ran without a site host');
  return site;
}
