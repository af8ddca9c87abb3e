import type { EntityManager } from '@mikro-orm/postgresql';
import {
  CustomFieldDefinitionSchema,
  type CustomFieldDefinition,
  type CustomFieldEntityType,
  type CustomFieldValues,
} from '../../persistence/entities/custom-field-definition.entity.ts';
import { DomainError } from '../domain-error.ts';

/** Longest text value accepted. */
export const MAX_TEXT_VALUE_LENGTH = 2000;

/** What checking values reads of a definition: a full definition, or the same fields read by raw SQL. */
export type FieldRule = Pick<CustomFieldDefinition, 'key' | 'dataType' | 'isRequired' | 'isActive' | 'options'>;

/** What a create or update body carries: values by key; on update, `null` removes a value. */
export type CustomFieldInput = Record<string, unknown>;

/** The site's definitions of an entity type, active and inactive (values of inactive ones are kept, not written). */
export function loadDefinitions(em: EntityManager, entityType: CustomFieldEntityType): Promise<CustomFieldDefinition[]> {
  return em.find(CustomFieldDefinitionSchema, { entityType }, { orderBy: { sortOrder: 'asc', key: 'asc' } });
}

/**
 * The values an entity holds after a create (`current` null) or an update, checked against the site's definitions:
 * each key must name an active definition, each value must fit its data type (a select's value one of its options,
 * a date `YYYY-MM-DD`), and on create every required active field must have a value. On update, supplied keys change,
 * omitted keys stay, and `null` removes a value (refused for a required field); `input` null removes every value, the
 * values of deactivated fields too (refused while an active field is required, which `{key: null}` could not clear
 * either). Pure: nothing is read or written.
 * @throws DomainError 400 naming `<prefix>.<key>`: UNKNOWN_CUSTOM_FIELD, CUSTOM_FIELD_INACTIVE, INVALID_CUSTOM_FIELD
 *   (wrong type), INVALID_OPTION, CUSTOM_FIELD_REQUIRED
 */
export function resolveCustomFields(
  definitions: readonly FieldRule[],
  current: CustomFieldValues | null,
  input: CustomFieldInput | null | undefined,
  prefix = 'custom_fields',
): CustomFieldValues {
  if (input === null) return withoutValues(definitions, prefix);
  const values: CustomFieldValues = { ...current };
  for (const [key, value] of Object.entries(input ?? {})) {
    const field = `${prefix}.${key}`;
    const definition = definitions.find((d) => d.key === key);
    if (!definition) throw DomainError.invalid('UNKNOWN_CUSTOM_FIELD', `No custom field ${key} is defined here`, field);
    // A deactivated field's stored value may still be removed, or sent back as it was (what GET answered): only a
    // new value is refused. A required field that was deactivated no longer binds.
    if (value === null || value === undefined || value === '') {
      if (definition.isActive && definition.isRequired) throw DomainError.invalid('CUSTOM_FIELD_REQUIRED', `The custom field ${key} is required`, field);
      delete values[key];
      continue;
    }
    if (!definition.isActive) {
      if (JSON.stringify(current?.[key]) === JSON.stringify(value)) continue;
      throw DomainError.invalid('CUSTOM_FIELD_INACTIVE', `The custom field ${key} is deactivated`, field);
    }
    values[key] = checkValue(definition, value, field);
  }
  if (current === null) {
    for (const definition of definitions) {
      if (definition.isActive && definition.isRequired && values[definition.key] === undefined) {
        throw DomainError.invalid('CUSTOM_FIELD_REQUIRED', `The custom field ${definition.key} is required`, `${prefix}.${definition.key}`);
      }
    }
  }
  return values;
}

/** The values worth copying to a new record (a duplicate): those of active definitions. */
export function activeValues(definitions: CustomFieldDefinition[], values: CustomFieldValues | null | undefined): CustomFieldValues {
  const active = new Set(definitions.filter((d) => d.isActive).map((d) => d.key));
  return Object.fromEntries(Object.entries(values ?? {}).filter(([key]) => active.has(key)));
}

/**
 * A search filter on custom field values: a JSON object `{"key": value}` (as the `custom_fields` query parameter),
 * matched by containment, so every given key must hold exactly that value (`{"priority": "high", "fragile": true}`).
 * @throws DomainError 400 INVALID_CUSTOM_FIELD_FILTER (field `custom_fields`)
 */
export function parseCustomFieldFilter(raw: string | undefined): CustomFieldValues | undefined {
  if (raw === undefined || raw === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = null;
  }
  const valid =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) &&
    Object.values(parsed).every((v) => ['string', 'number', 'boolean'].includes(typeof v));
  if (!valid) {
    throw DomainError.invalid('INVALID_CUSTOM_FIELD_FILTER', 'custom_fields must be a JSON object of key to text, number or boolean, e.g. {"priority":"high"}', 'custom_fields');
  }
  return parsed as CustomFieldValues;
}

/** `true` when the text is a real calendar date written `YYYY-MM-DD`. */
export function isIsoDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

function checkValue(definition: FieldRule, value: unknown, field: string): string | number | boolean {
  const wrongType = (expected: string) =>
    DomainError.invalid('INVALID_CUSTOM_FIELD', `The custom field ${definition.key} takes ${expected}`, field);
  switch (definition.dataType) {
    case 'text':
      if (typeof value !== 'string') throw wrongType('text');
      if (value.length > MAX_TEXT_VALUE_LENGTH) throw wrongType(`text of at most ${MAX_TEXT_VALUE_LENGTH} characters`);
      return value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType('a number');
      return value;
    case 'checkbox':
      if (typeof value !== 'boolean') throw wrongType('true or false');
      return value;
    case 'date':
      if (typeof value !== 'string' || !isIsoDate(value)) throw wrongType('a date written YYYY-MM-DD');
      return value;
    case 'select': {
      const allowed = definition.options.map((o) => o.value);
      if (typeof value !== 'string' || !allowed.includes(value)) {
        throw DomainError.invalid('INVALID_OPTION', `The custom field ${definition.key} takes one of: ${allowed.join(', ')}`, field);
      }
      return value;
    }
  }
}

function withoutValues(definitions: readonly FieldRule[], prefix: string): CustomFieldValues {
  const required = definitions.find((d) => d.isActive && d.isRequired);
  if (required) throw DomainError.invalid('CUSTOM_FIELD_REQUIRED', `The custom field ${required.key} is required`, `${prefix}.${required.key}`);
  return {};
}
