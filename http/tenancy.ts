import { isIP } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { OrganizationSchema } from '../persistence/entities/organization.entity.ts';
import { SiteSchema, type Site } from '../persistence/entities/site.entity.ts';
import { ApiError } from './errors.ts';
import { InFlight } from './in-flight.ts';

/** What a request's Host names: one site (by its subdomain, the Host's first label) or the platform. */
export type HostTarget = { kind: 'platform' } | { kind: 'site'; subdomain: string };

/** Hosts already parsed, per base domain: every request of a tenant sends the same Host. Bounded (cleared when full). */
const parsedHosts = new Map<string, Map<string, HostTarget>>();
const MAX_PARSED_HOSTS = 10_000;

/**
 * `acme.dispatch.example` → site `acme` when BASE_DOMAIN is `dispatch.example`; `acme.localhost:3000` locally.
 * The bare base domain, an IP address, or no Host at all is the platform host.
 * @throws ApiError 404 SITE_NOT_FOUND for a host outside the base domain or with nested labels
 */
export function parseHost(host: string | null, baseDomain: string): HostTarget {
  let known = parsedHosts.get(baseDomain);
  if (!known) parsedHosts.set(baseDomain, (known = new Map()));
  const key = host ?? '';
  const hit = known.get(key);
  if (hit) return hit;
  const target = parseHostUncached(host, baseDomain);
  if (known.size >= MAX_PARSED_HOSTS) known.clear();
  known.set(key, target);
  return target;
}

function parseHostUncached(host: string | null, baseDomain: string): HostTarget {
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

/** A site as the directory serves it: with whether its organization is switched on (it serves only if both are). */
type ServedSite = { site: Site; organizationActive: boolean };

/**
 * Sites by subdomain, cached for 30 s of wall time (a monotonic clock, whatever the engine's); cleared whenever a
 * site or an organization changes, in every process. A warm entry is answered synchronously (no
 * promise, no await: each costs a request measurable CPU), and the requests that miss an entry at once share one
 * database load instead of each running their own every 30 s.
 */
export class SiteDirectory {
  private readonly cache = new Map<string, ServedSite & { until: number }>();
  private readonly loading = new InFlight<string, ServedSite | null>();
  /** Bumped by every invalidation: a load that began before one is handed to its waiters but not cached. */
  private generation = 0;

  constructor(private readonly orm: MikroORM) {}

  /**
   * The site of `subdomain`: synchronously when cached, else once it is loaded.
   * @throws ApiError 404 SITE_NOT_FOUND, 403 SITE_INACTIVE (the site, or its organization, is switched off)
   */
  resolve(subdomain: string): Site | Promise<Site> {
    const hit = this.cache.get(subdomain);
    if (hit && hit.until > performance.now()) return usable(subdomain, hit);
    return this.load(subdomain).then((served) => usable(subdomain, served));
  }

  invalidate(): void {
    this.generation += 1;
    this.cache.clear();
    this.loading.clear();
  }

  private load(subdomain: string): Promise<ServedSite | null> {
    return this.loading.run(subdomain, async () => {
      const generation = this.generation;
      const em = this.orm.em.fork();
      const site = await em.findOne(SiteSchema, { subdomain });
      // Unknown subdomains are not cached: a site created in another process must be found at once.
      if (!site) return null;
      const organization = await em.findOne(OrganizationSchema, { id: site.organizationId }, { fields: ['isActive'] });
      const served = { site, organizationActive: organization?.isActive === true };
      if (this.generation === generation) this.cache.set(subdomain, { ...served, until: performance.now() + TTL_MS });
      return served;
    });
  }
}

function usable(subdomain: string, served: ServedSite | null): Site {
  if (!served) throw new ApiError(404, 'SITE_NOT_FOUND', `No site has the subdomain ${subdomain}`);
  if (!served.site.isActive) throw new ApiError(403, 'SITE_INACTIVE', `Site ${subdomain} is deactivated`);
  // The same refusal as the site's own: to its users and keys the site is off, whichever switch did it.
  if (!served.organizationActive) throw new ApiError(403, 'SITE_INACTIVE', `Site ${subdomain} is deactivated: its organization is switched off`);
  return served.site;
}

/**
 * The Host's site, for operations declared `host: 'site'`: the pipeline refuses those on the platform host before
 * the handler runs, so a null here is a wiring bug, not a client error.
 */
export function requireSite<S extends { id: string }>(site: S | null): S {
  if (!site) throw new Error('a site operation ran without a site host');
  return site;
}
