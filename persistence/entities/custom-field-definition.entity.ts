import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { siteFilter, timestamps } from './columns.ts';

/** The entities that carry custom fields. A customer's values live on their customer profile of the site. */
export const CUSTOM_FIELD_ENTITY_TYPES = ['job', 'stop', 'worker', 'customer'] as const;
export type CustomFieldEntityType = (typeof CUSTOM_FIELD_ENTITY_TYPES)[number];

export const CUSTOM_FIELD_DATA_TYPES = ['text', 'number', 'select', 'date', 'checkbox'] as const;
export type CustomFieldDataType = (typeof CUSTOM_FIELD_DATA_TYPES)[number];

/** One choice of a `select` field: `value` is stored, `label` is shown. */
export type CustomFieldOption = { value: string; label: string };

/** An entity's custom field values by key: text, select and date (`YYYY-MM-DD`) as strings, numbers, checkboxes. */
export type CustomFieldValues = Record<string, string | number | boolean>;

/** A site's definition of one custom field of an entity type. `key` is unique per site and entity type. */
export const CustomFieldDefinitionSchema = defineEntity({
  name: 'CustomFieldDefinition',
  tableName: 'custom_field_definition',
  filters: siteFilter,
  properties: {
    id: p.string().primary(),
    siteId: p.string(),
    entityType: p.string().$type<CustomFieldEntityType>(),
    key: p.string(),
    label: p.string(),
    dataType: p.string().$type<CustomFieldDataType>(),
    isRequired: p.boolean().default(false),
    options: p.json<CustomFieldOption[]>(),
    sortOrder: p.integer().default(0),
    isActive: p.boolean().default(true),
    ...timestamps(),
  },
});

export type CustomFieldDefinition = InferEntity<typeof CustomFieldDefinitionSchema>;
