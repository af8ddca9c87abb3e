import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditActor } from '../../persistence/audit.ts';
import {
  CustomFieldDefinitionSchema,
  type CustomFieldDataType,
  type CustomFieldDefinition,
  type CustomFieldEntityType,
  type CustomFieldOption,
} from '../../persistence/entities/custom-field-definition.entity.ts';
import { newId } from '../../persistence/ids.ts';
import { applyPatch, auditSnapshot, containsPattern } from '../admin/patch.ts';
import { DomainError } from '../domain-error.ts';

/** An option as a body gives it: the label defaults to the value. */
export type OptionInput = { value: string; label?: string };

export type CreateDefinitionInput = {
  entity_type: CustomFieldEntityType;
  key: string;
  label: string;
  data_type: CustomFieldDataType;
  is_required?: boolean;
  options?: OptionInput[];
  sort_order?: number;
};

export type UpdateDefinitionInput = {
  id: string;
  label?: string;
  is_required?: boolean;
  is_active?: boolean;
  options?: OptionInput[];
  sort_order?: number;
};

const UPDATABLE = { label: 'label', is_required: 'isRequired', is_active: 'isActive', sort_order: 'sortOrder' } as const;

/**
 * Defines a custom field. A `select` needs options with distinct values; other types take none. The key is the
 * field's name in `custom_fields` and never changes.
 * @throws DomainError 400 OPTIONS_REQUIRED / OPTIONS_NOT_ALLOWED / DUPLICATE_OPTION (field `options`),
 *   409 CUSTOM_FIELD_EXISTS (field `key`)
 */
export async function createDefinition(em: EntityManager, actor: AuditActor, siteId: string, input: CreateDefinitionInput): Promise<CustomFieldDefinition> {
  checkOptions(input.data_type, input.options);
  if (await em.count(CustomFieldDefinitionSchema, { entityType: input.entity_type, key: input.key })) {
    throw new DomainError(409, 'CUSTOM_FIELD_EXISTS', `A ${input.entity_type} custom field with the key ${input.key} exists`, 'key');
  }
  const definition = em.create(CustomFieldDefinitionSchema, {
    id: newId('customField'),
    siteId,
    entityType: input.entity_type,
    key: input.key,
    label: input.label,
    dataType: input.data_type,
    isRequired: input.is_required ?? false,
    options: normalize(input.options),
    sortOrder: input.sort_order ?? 0,
    isActive: true,
  });
  recordAudit(em, actor, { siteId, action: 'create', entityType: 'CustomFieldDefinition', entityId: definition.id, before: null, after: auditSnapshot(definition) });
  await em.flush();
  return definition;
}

/** @throws DomainError 404 when absent or another site's */
export async function getDefinition(em: EntityManager, id: string): Promise<CustomFieldDefinition> {
  const definition = await em.findOne(CustomFieldDefinitionSchema, { id });
  if (!definition) throw DomainError.notFound('Custom field', id);
  return definition;
}

/**
 * Changes a definition: supplied fields change, omitted ones stay. Values already stored are left as they are
 * (a removed option or a newly required field applies to later writes); a deactivated field accepts no new values
 * and is no longer required.
 * @throws DomainError 404, 400 as {@link createDefinition} for options
 */
export async function updateDefinition(em: EntityManager, actor: AuditActor, siteId: string, input: UpdateDefinitionInput): Promise<CustomFieldDefinition> {
  const definition = await getDefinition(em, input.id);
  const before = auditSnapshot(definition);
  if (input.options !== undefined) {
    checkOptions(definition.dataType, input.options);
    definition.options = normalize(input.options);
  }
  applyPatch(definition, input, UPDATABLE);
  recordAudit(em, actor, { siteId, action: 'update', entityType: 'CustomFieldDefinition', entityId: definition.id, before, after: auditSnapshot(definition) });
  await em.flush();
  return definition;
}

export type DefinitionFilter = { entity_type?: CustomFieldEntityType; data_type?: CustomFieldDataType; is_active?: boolean; q?: string };

/** Definitions matching every filter given; `q` matches key and label. */
export function searchDefinitions(
  em: EntityManager,
  filter: DefinitionFilter,
  page: { limit: number; offset: number; orderBy: Record<string, 'asc' | 'desc'> },
): Promise<[CustomFieldDefinition[], number]> {
  const pattern = filter.q ? containsPattern(filter.q) : null;
  return em.findAndCount(
    CustomFieldDefinitionSchema,
    {
      ...(pattern ? { $or: [{ key: { $ilike: pattern } }, { label: { $ilike: pattern } }] } : {}),
      ...(filter.entity_type ? { entityType: filter.entity_type } : {}),
      ...(filter.data_type ? { dataType: filter.data_type } : {}),
      ...(filter.is_active === undefined ? {} : { isActive: filter.is_active }),
    },
    page,
  );
}

function normalize(options: OptionInput[] | undefined): CustomFieldOption[] {
  return (options ?? []).map((o) => ({ value: o.value, label: o.label ?? o.value }));
}

function checkOptions(dataType: CustomFieldDataType, options: OptionInput[] | undefined): void {
  if (dataType !== 'select') {
    if (options && options.length > 0) throw DomainError.invalid('OPTIONS_NOT_ALLOWED', `A ${dataType} field takes no options`, 'options');
    return;
  }
  if (!options || options.length === 0) throw DomainError.invalid('OPTIONS_REQUIRED', 'A select field needs at least one option', 'options');
  const seen = new Set<string>();
  for (const [index, option] of options.entries()) {
    if (seen.has(option.value)) throw DomainError.invalid('DUPLICATE_OPTION', `Two options have the value ${option.value}`, `options.${index}.value`);
    seen.add(option.value);
  }
}
