import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { ServiceTypeSchema, type ServiceType } from '../../persistence/entities/service-type.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { applyPatch, auditSnapshot, containsPattern } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';
import { type CatalogSite, priceCurrency } from './catalog-site.ts';

export type ServiceTypeInput = {
  name: string;
  description?: string;
  code?: string;
  default_duration_seconds?: number;
  base_price_cents?: number;
  currency?: string;
  vehicle_types?: string[];
};

const UPDATABLE = {
  name: 'name',
  description: 'description',
  code: 'code',
  default_duration_seconds: 'defaultDurationSeconds',
  base_price_cents: 'basePriceCents',
  currency: 'currency',
  vehicle_types: 'vehicleTypes',
  is_active: 'isActive',
} as const;

/**
 * Adds a service type to a site's catalog. A base price (integer cents) without a currency is in the site's currency.
 * @throws DomainError 409 SERVICE_TYPE_CODE_TAKEN when another service type of the site has the code
 */
export async function createServiceType(em: EntityManager, actor: AuditActor, site: CatalogSite, input: ServiceTypeInput): Promise<ServiceType> {
  if (input.code !== undefined) await assertCodeFree(em, input.code, null);
  const serviceType = em.create(ServiceTypeSchema, {
    id: newId('serviceType'),
    siteId: site.id,
    name: input.name,
    description: input.description ?? null,
    code: input.code ?? null,
    defaultDurationSeconds: input.default_duration_seconds ?? null,
    basePriceCents: input.base_price_cents ?? null,
    currency: priceCurrency(site, input.base_price_cents ?? null, input.currency ?? null),
    vehicleTypes: input.vehicle_types ?? null,
    isActive: true,
  });
  recordAudit(em, actor, { siteId: site.id, action: 'create', entityType: 'ServiceType', entityId: serviceType.id, before: null, after: auditSnapshot(serviceType) });
  await em.flush();
  return serviceType;
}

/** @throws DomainError 404 when absent or another site's */
export async function getServiceType(em: EntityManager, id: string): Promise<ServiceType> {
  const serviceType = await em.findOne(ServiceTypeSchema, { id });
  if (!serviceType) throw DomainError.notFound('Service type', id);
  return serviceType;
}

/**
 * Three-state update: a value sets a field, an omitted one stays, `null` clears it.
 * @throws DomainError 404, 409 SERVICE_TYPE_CODE_TAKEN
 */
export async function updateServiceType(
  em: EntityManager,
  actor: AuditActor,
  site: CatalogSite,
  patch: { id: string; code?: string | null } & Record<string, unknown>,
): Promise<ServiceType> {
  const serviceType = await getServiceType(em, patch.id);
  if (typeof patch.code === 'string' && patch.code !== serviceType.code) await assertCodeFree(em, patch.code, serviceType.id);
  const before = auditSnapshot(serviceType);
  applyPatch(serviceType, patch, UPDATABLE);
  serviceType.currency = priceCurrency(site, serviceType.basePriceCents ?? null, serviceType.currency ?? null);
  recordAudit(em, actor, { siteId: site.id, action: 'update', entityType: 'ServiceType', entityId: serviceType.id, before, after: auditSnapshot(serviceType) });
  await em.flush();
  return serviceType;
}

export async function searchServiceTypes(
  em: EntityManager,
  filter: { q?: string; is_active?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[ServiceType[], number]> {
  const pattern = filter.q ? containsPattern(filter.q) : null;
  return em.findAndCount(
    ServiceTypeSchema,
    {
      ...(pattern ? { $or: [{ name: { $ilike: pattern } }, { code: { $ilike: pattern } }] } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
    },
    page,
  );
}

/**
 * For the job service: the service type a new job names, which must be this site's and active.
 * @throws DomainError 404 NOT_FOUND / 422 SERVICE_TYPE_INACTIVE, both naming the field `service_type_id`
 */
export async function assertServiceType(em: EntityManager, id: string): Promise<ServiceType> {
  const serviceType = await em.findOne(ServiceTypeSchema, { id });
  if (!serviceType) throw new DomainError(404, 'NOT_FOUND', `Service type ${id} not found`, 'service_type_id');
  if (!serviceType.isActive) {
    throw new DomainError(422, 'SERVICE_TYPE_INACTIVE', `Service type ${id} is deactivated`, 'service_type_id');
  }
  return serviceType;
}

async function assertCodeFree(em: EntityManager, code: string, exceptId: string | null): Promise<void> {
  const taken = await em.count(ServiceTypeSchema, { code, ...(exceptId ? { id: { $ne: exceptId } } : {}) });
  if (taken > 0) throw DomainError.conflict('SERVICE_TYPE_CODE_TAKEN', `Another service type of this site has the code ${code}`);
}
