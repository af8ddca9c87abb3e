import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { OrganizationSchema, type Organization } from '../../persistence/entities/organization.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { DomainError } from '../domain-error.ts';
import { applyPatch, auditSnapshot, containsPattern } from './patch.ts';
import { assertSiteAddress } from './site.service.ts';

export type OrganizationInput = {
  name: string;
  description?: string;
  email?: string;
  phone?: string;
  phone_country?: string;
  address_id?: string;
  latitude?: number;
  longitude?: number;
};

export type OrganizationPatch = { id: string } & Partial<Record<string, unknown>>;

const UPDATABLE = {
  name: 'name',
  description: 'description',
  email: 'email',
  phone: 'phone',
  phone_country: 'phoneCountry',
  is_active: 'isActive',
} as const;

/**
 * Organizations are platform records: audited with no site. Its `address_id` is a global address, as a new site's;
 * its coordinates come as a pair.
 * @throws DomainError 404 naming address_id, 400 COORDINATES_INCOMPLETE naming the missing one
 */
export async function createOrganization(em: EntityManager, actor: AuditActor, input: OrganizationInput): Promise<Organization> {
  if ((input.latitude === undefined) !== (input.longitude === undefined)) {
    const missing = input.latitude === undefined ? 'latitude' : 'longitude';
    throw DomainError.invalid('COORDINATES_INCOMPLETE', `latitude and longitude go together: ${missing} is missing`, missing);
  }
  if (input.address_id) await assertSiteAddress(em, null, input.address_id);
  const organization = em.create(OrganizationSchema, {
    id: newId('organization'),
    name: input.name,
    description: input.description ?? null,
    email: input.email ?? null,
    phone: input.phone ?? null,
    phoneCountry: input.phone_country ?? null,
    addressId: input.address_id ?? null,
    latitude: input.latitude ?? null,
    longitude: input.longitude ?? null,
    isActive: true,
  });
  recordAudit(em, actor, { siteId: null, action: 'create', entityType: 'Organization', entityId: organization.id, before: null, after: auditSnapshot(organization) });
  await em.flush();
  return organization;
}

/** @throws DomainError 404 when absent */
export async function getOrganization(em: EntityManager, id: string): Promise<Organization> {
  const organization = await em.findOne(OrganizationSchema, { id });
  if (!organization) throw DomainError.notFound('Organization', id);
  return organization;
}

export async function updateOrganization(em: EntityManager, actor: AuditActor, patch: OrganizationPatch): Promise<Organization> {
  const organization = await getOrganization(em, patch.id);
  const before = auditSnapshot(organization);
  applyPatch(organization, patch, UPDATABLE);
  recordAudit(em, actor, { siteId: null, action: 'update', entityType: 'Organization', entityId: organization.id, before, after: auditSnapshot(organization) });
  await em.flush();
  return organization;
}

export async function searchOrganizations(
  em: EntityManager,
  filter: { q?: string; is_active?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[Organization[], number]> {
  return em.findAndCount(
    OrganizationSchema,
    {
      ...(filter.q ? { $or: [{ name: { $ilike: containsPattern(filter.q) } }, { email: { $ilike: containsPattern(filter.q) } }] } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
    },
    page,
  );
}
