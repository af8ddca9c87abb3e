import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import { EarningsRuleSchema, type EarningsComponent, type EarningsRule } from '../../persistence/entities/earnings-rule.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { auditSnapshot, containsPattern } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';

export type EarningsRuleInput = {
  name: string;
  components: EarningsComponent[];
  minimum_amount?: number;
  maximum_amount?: number;
  is_default?: boolean;
};

export type EarningsRulePatch = {
  id: string;
  name?: string;
  components?: EarningsComponent[];
  minimum_amount?: number | null;
  maximum_amount?: number | null;
  is_default?: boolean;
  is_active?: boolean;
};

/**
 * Creates a pay rule. The site's first active rule becomes its default whatever `is_default` says: a site with
 * rules but no default would pay nobody (completed jobs are paid with the default only), and a default cannot be
 * un-set later. `is_default: true` moves the default to the new rule (the old one is cleared in the same transaction).
 * @throws DomainError 400 on duplicate component types, a percentage over 100, or minimum above maximum
 */
export async function createEarningsRule(em: EntityManager, actor: AuditActor, siteId: string, input: EarningsRuleInput): Promise<EarningsRule> {
  checkComponents(input.components);
  checkBounds(input.minimum_amount ?? null, input.maximum_amount ?? null);
  await lockDefault(em, siteId);
  const hasDefault = (await em.count(EarningsRuleSchema, { isDefault: true })) > 0;
  const isDefault = !hasDefault || input.is_default === true;
  const id = newId('earningsRule');
  if (isDefault) await clearDefault(em, actor, siteId, id);
  const rule = em.create(EarningsRuleSchema, {
    id,
    siteId,
    name: input.name,
    components: input.components,
    minimumAmount: toDecimal(input.minimum_amount ?? null),
    maximumAmount: toDecimal(input.maximum_amount ?? null),
    isDefault,
    isActive: true,
  });
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'EarningsRule', entityId: rule.id, before: null, after: auditSnapshot(rule) });
  await em.flush();
  return rule;
}

/**
 * Three-state update. The default rule must stay active (deactivate it after making another the default), and
 * `is_default: false` on the default is refused: a site with rules always has one to pay completed jobs with.
 * @throws DomainError 404, 400 (as on create), 409 DEFAULT_RULE_REQUIRED
 */
export async function updateEarningsRule(em: EntityManager, actor: AuditActor, siteId: string, patch: EarningsRulePatch): Promise<EarningsRule> {
  await lockDefault(em, siteId);
  const rule = await getEarningsRule(em, patch.id);
  const before = auditSnapshot(rule);
  if (patch.components !== undefined) checkComponents(patch.components);
  const minimum = patch.minimum_amount === undefined ? fromDecimal(rule.minimumAmount) : patch.minimum_amount;
  const maximum = patch.maximum_amount === undefined ? fromDecimal(rule.maximumAmount) : patch.maximum_amount;
  checkBounds(minimum, maximum);
  const isActive = patch.is_active ?? rule.isActive;
  const isDefault = patch.is_default ?? rule.isDefault;
  if (rule.isDefault && !isDefault) {
    throw DomainError.conflict('DEFAULT_RULE_REQUIRED', 'This is the default rule: make another rule the default instead');
  }
  if (isDefault && !isActive) {
    throw DomainError.conflict('DEFAULT_RULE_REQUIRED', 'The default rule must stay active: make another rule the default first');
  }
  if (isDefault && !rule.isDefault) {
    await clearDefault(em, actor, siteId, rule.id);
  }
  if (patch.name !== undefined) rule.name = patch.name;
  if (patch.components !== undefined) rule.components = patch.components;
  rule.minimumAmount = toDecimal(minimum);
  rule.maximumAmount = toDecimal(maximum);
  rule.isActive = isActive;
  rule.isDefault = isDefault;
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'EarningsRule', entityId: rule.id, before, after: auditSnapshot(rule) });
  await em.flush();
  return rule;
}

/** @throws DomainError 404 when absent or another site's */
export async function getEarningsRule(em: EntityManager, id: string): Promise<EarningsRule> {
  const rule = await em.findOne(EarningsRuleSchema, { id });
  if (!rule) throw DomainError.notFound('Earnings rule', id);
  return rule;
}

/** The rule completed jobs are paid with, or null when the site has none. */
export async function defaultEarningsRule(em: EntityManager): Promise<EarningsRule | null> {
  return em.findOne(EarningsRuleSchema, { isDefault: true, isActive: true });
}

export async function searchEarningsRules(
  em: EntityManager,
  filter: { q?: string; is_active?: boolean; is_default?: boolean },
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[EarningsRule[], number]> {
  return em.findAndCount(
    EarningsRuleSchema,
    {
      ...(filter.q ? { name: { $ilike: containsPattern(filter.q) } } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
      ...(filter.is_default === undefined ? {} : { isDefault: filter.is_default }),
    },
    page,
  );
}

/** Bounds as numbers (the column is numeric, read as a string). */
export function fromDecimal(value: string | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function toDecimal(value: number | null): string | null {
  return value === null ? null : value.toFixed(2);
}

/** Default changes of one site run one at a time, so two "make me the default" calls cannot both win. */
async function lockDefault(em: EntityManager, siteId: string): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtext('earnings-default:' || ?))`, [siteId]);
}

/** The old default stops being one, audited as an update of that rule (the change is to it, made by this call). */
async function clearDefault(em: EntityManager, actor: AuditActor, siteId: string, replacedBy: string): Promise<void> {
  const old = await em.findOne(EarningsRuleSchema, { siteId, isDefault: true });
  if (!old) return;
  const before = auditSnapshot(old);
  old.isDefault = false;
  // Written at once (not at the end of the unit of work), so the partial unique index never sees two defaults.
  await em.flush();
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'EarningsRule', entityId: old.id, before, after: { ...auditSnapshot(old), replaced_by: replacedBy } });
}

function checkComponents(components: EarningsComponent[]): void {
  const seen = new Set<string>();
  components.forEach((component, index) => {
    if (seen.has(component.type)) {
      throw DomainError.invalid('DUPLICATE_COMPONENT', `components.${index}: ${component.type} appears twice; give one rate per type`, `components.${index}.type`);
    }
    seen.add(component.type);
    if (component.type === 'percentage_of_job' && component.rate > 100) {
      throw DomainError.invalid('INVALID_RATE', `components.${index}: a percentage_of_job rate is a percentage (0 to 100)`, `components.${index}.rate`);
    }
  });
}

function checkBounds(minimum: number | null, maximum: number | null): void {
  if (minimum !== null && maximum !== null && minimum > maximum) {
    throw DomainError.invalid('INVALID_BOUNDS', `minimum_amount (${minimum}) is above maximum_amount (${maximum})`, 'minimum_amount');
  }
}
