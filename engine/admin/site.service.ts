import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { OrganizationSchema } from '../../persistence/entities/organization.entity.ts';
import { SiteSchema, type Site } from '../../persistence/entities/site.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { switchTenant } from '../../persistence/tenant-scope.ts';
import { DomainError } from '../domain-error.ts';
import { createDefaultWorkflows } from '../workflow/workflow.service.ts';
import { applyPatch, auditSnapshot, containsPattern } from './patch.ts';

/** Labels that name platform infrastructure, never a tenant. */
const RESERVED_SUBDOMAINS = new Set(['www', 'api', 'app', 'admin', 'platform', 'docs', 'status', 'mail', 'static']);

export type SiteInput = {
  name: string;
  organization_id: string;
  subdomain: string;
  description?: string;
  email?: string;
  phone?: string;
  phone_country?: string;
  website?: string;
  address_id?: string;
  currency?: string;
  timezone?: string;
  industry_type?: string;
  notes?: string;
  unit_system?: 'metric' | 'imperial';
};

const UPDATABLE = {
  name: 'name',
  subdomain: 'subdomain',
  description: 'description',
  email: 'email',
  phone: 'phone',
  phone_country: 'phoneCountry',
  website: 'website',
  address_id: 'addressId',
  currency: 'currency',
  timezone: 'timezone',
  notes: 'notes',
  unit_system: 'unitSystem',
  is_active: 'isActive',
} as const;

/**
 * Creates a site under an organization. Defaults: USD, UTC, metric.
 * @throws DomainError 404 unknown organization, 409 ORGANIZATION_INACTIVE / SUBDOMAIN_TAKEN, 400 RESERVED_SUBDOMAIN /
 *   INVALID_TIMEZONE
 */
export async function createSite(em: EntityManager, actor: AuditActor, input: SiteInput): Promise<Site> {
  const organization = await em.findOne(OrganizationSchema, { id: input.organization_id });
  if (!organization) throw DomainError.notFound('Organization', input.organization_id);
  // Its sites are switched off with it: a new one would be created unusable.
  if (!organization.isActive) {
    throw new DomainError(409, 'ORGANIZATION_INACTIVE', `Organization ${organization.id} is deactivated: reactivate it before adding a site`, 'organization_id');
  }
  await assertSubdomainFree(em, input.subdomain);
  await assertTimezone(em, input.timezone);
  if (input.address_id) await assertSiteAddress(em, null, input.address_id);
  const site = em.create(SiteSchema, {
    id: newId('site'),
    organizationId: organization.id,
    name: input.name,
    subdomain: input.subdomain,
    description: input.description ?? null,
    email: input.email ?? null,
    phone: input.phone ?? null,
    phoneCountry: input.phone_country ?? null,
    website: input.website ?? null,
    addressId: input.address_id ?? null,
    currency: input.currency ?? 'USD',
    timezone: input.timezone ?? 'UTC',
    industryType: input.industry_type ?? null,
    notes: input.notes ?? null,
    unitSystem: input.unit_system ?? 'metric',
    isActive: true,
  });
  recordAudit(em, actor, { siteId: null, action: 'create', entityType: 'Site', entityId: site.id, before: null, after: auditSnapshot(site) });
  await em.flush();
  await switchTenant(em, { siteId: site.id, platform: true });
  await createDefaultWorkflows(em, site.id, actor);
  await em.flush();
  return site;
}

export async function getSite(em: EntityManager, id: string): Promise<Site> {
  const site = await em.findOne(SiteSchema, { id });
  if (!site) throw DomainError.notFound('Site', id);
  return site;
}

/** Audited under the caller's tenant: the site's own log for its admin, the platform's for the operator. */
export async function updateSite(
  em: EntityManager,
  actor: AuditActor,
  auditSiteId: string | null,
  patch: { id: string } & Record<string, unknown>,
): Promise<Site> {
  const site = await getSite(em, patch.id);
  if (typeof patch.subdomain === 'string' && patch.subdomain !== site.subdomain) await assertSubdomainFree(em, patch.subdomain);
  await assertTimezone(em, patch.timezone as string | undefined);
  if (typeof patch.address_id === 'string' && patch.address_id !== site.addressId) await assertSiteAddress(em, site.id, patch.address_id);
  const before = auditSnapshot(site);
  applyPatch(site, patch, UPDATABLE);
  recordAudit(em, actor, { siteId: auditSiteId, action: 'update', entityType: 'Site', entityId: site.id, before, after: auditSnapshot(site) });
  await em.flush();
  return site;
}

export async function searchSites(
  em: EntityManager,
  filter: { q?: string; organization_id?: string; is_active?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[Site[], number]> {
  return em.findAndCount(
    SiteSchema,
    {
      ...(filter.q ? { $or: [{ name: { $ilike: containsPattern(filter.q) } }, { subdomain: { $ilike: containsPattern(filter.q) } }] } : {}),
      ...(filter.organization_id ? { organizationId: filter.organization_id } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
    },
    page,
  );
}

async function assertSubdomainFree(em: EntityManager, subdomain: string): Promise<void> {
  if (RESERVED_SUBDOMAINS.has(subdomain)) {
    throw DomainError.invalid('RESERVED_SUBDOMAIN', `The subdomain ${subdomain} is reserved`, 'subdomain');
  }
  if (await em.count(SiteSchema, { subdomain })) {
    throw DomainError.conflict('SUBDOMAIN_TAKEN', `Another site already uses the subdomain ${subdomain}`);
  }
}

/**
 * A zone both `Intl` (schedules, windows) and PostgreSQL (`at time zone` in service days and earnings) know: each
 * ships its own tz database, and a name only one of them knows (`US/Pacific-New` in Node 20's) would make the
 * other's queries fail for the site.
 */
async function assertTimezone(em: EntityManager, timezone: string | undefined): Promise<void> {
  if (timezone === undefined) return;
  const [known] = isIanaZone(timezone) ? await em.execute('select 1 from pg_timezone_names where lower(name) = lower(?) limit 1', [timezone]) : [];
  if (!known) throw DomainError.invalid('INVALID_TIMEZONE', `${timezone} is not an IANA time zone`, 'timezone');
}

/**
 * Whether `Intl` knows the zone by this name. `Intl.supportedValuesOf` lists only each zone's canonical name, which
 * on Node 20 is the old one (Asia/Calcutta, Europe/Kiev, no Etc/UTC), so it refused the current names. An offset
 * (`+05:30`, accepted by newer engines) is refused: Postgres reads such a name with the opposite sign.
 */
function isIanaZone(timezone: string): boolean {
  if (/^[+-]/.test(timezone)) return false;
  try {
    return new Intl.DateTimeFormat('en', { timeZone: timezone }).resolvedOptions().timeZone !== '';
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}

/**
 * A site's own address is one of its addresses or a global one (a new site, or an organization, has none of its own
 * yet: `siteId` null): not another site's, whose customer would then find their own address "in use" and could not
 * change it.
 * @throws DomainError 404 naming address_id
 */
export async function assertSiteAddress(em: EntityManager, siteId: string | null, addressId: string): Promise<void> {
  const [found] = await em.execute('select 1 from address where id = ? and (site_id is null or site_id = ?)', [addressId, siteId]);
  if (!found) throw new DomainError(404, 'NOT_FOUND', `Address ${addressId} not found`, 'address_id');
}
