import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { OptionSchema, type Option } from '../../persistence/entities/option.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { applyPatch, auditSnapshot, containsPattern } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';
import { type CatalogSite, priceCurrency } from './catalog-site.ts';

export type OptionInput = { name: string; description?: string; price_cents?: number; currency?: string };

const UPDATABLE = {
  name: 'name',
  description: 'description',
  price_cents: 'priceCents',
  currency: 'currency',
  is_active: 'isActive',
} as const;

/** Adds an option (a job extra) to a site's catalog; a price (integer cents) without a currency is in the site's. */
export async function createOption(em: EntityManager, actor: AuditActor, site: CatalogSite, input: OptionInput): Promise<Option> {
  const option = em.create(OptionSchema, {
    id: newId('option'),
    siteId: site.id,
    name: input.name,
    description: input.description ?? null,
    priceCents: input.price_cents ?? null,
    currency: priceCurrency(site, input.price_cents ?? null, input.currency ?? null),
    isActive: true,
  });
  recordAudit(em, actor, { siteId: site.id, action: 'create', entityType: 'Option', entityId: option.id, before: null, after: auditSnapshot(option) });
  await em.flush();
  return option;
}

/** @throws DomainError 404 when absent or another site's */
export async function getOption(em: EntityManager, id: string): Promise<Option> {
  const option = await em.findOne(OptionSchema, { id });
  if (!option) throw DomainError.notFound('Option', id);
  return option;
}

/** Three-state update: a value sets a field, an omitted one stays, `null` clears it. @throws DomainError 404 */
export async function updateOption(
  em: EntityManager,
  actor: AuditActor,
  site: CatalogSite,
  patch: { id: string } & Record<string, unknown>,
): Promise<Option> {
  const option = await getOption(em, patch.id);
  const before = auditSnapshot(option);
  applyPatch(option, patch, UPDATABLE);
  option.currency = priceCurrency(site, option.priceCents ?? null, option.currency ?? null);
  recordAudit(em, actor, { siteId: site.id, action: 'update', entityType: 'Option', entityId: option.id, before, after: auditSnapshot(option) });
  await em.flush();
  return option;
}

export async function searchOptions(
  em: EntityManager,
  filter: { q?: string; is_active?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[Option[], number]> {
  return em.findAndCount(
    OptionSchema,
    {
      ...(filter.q ? { name: { $ilike: containsPattern(filter.q) } } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
    },
    page,
  );
}

/**
 * For the job service: the options a job names, which must all be this site's and active. Repeated ids count once.
 * @returns the options in the order first named
 * @throws DomainError 404 NOT_FOUND / 422 OPTION_INACTIVE naming the field `option_ids` and the offending ids
 */
export async function assertOptions(em: EntityManager, ids: readonly string[]): Promise<Option[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const found = await em.find(OptionSchema, { id: { $in: unique } });
  const byId = new Map(found.map((option) => [option.id, option]));
  const missing = unique.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new DomainError(404, 'NOT_FOUND', `Option ${missing.join(', ')} not found`, 'option_ids');
  const inactive = found.filter((option) => !option.isActive).map((option) => option.id);
  if (inactive.length > 0) throw new DomainError(422, 'OPTION_INACTIVE', `Option ${inactive.join(', ')} is deactivated`, 'option_ids');
  return unique.map((id) => byId.get(id) as Option);
}
