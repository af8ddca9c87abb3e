import { Type } from 'typebox';
import { CUSTOM_FIELD_DATA_TYPES, CUSTOM_FIELD_ENTITY_TYPES, type CustomFieldDefinition } from '../../persistence/entities/custom-field-definition.entity.ts';
import { Id, Timestamp } from './common.schema.ts';

export const CustomFieldEntityType = Type.Union([Type.Literal('job'), Type.Literal('stop'), Type.Literal('worker'), Type.Literal('customer')], {
  description: CUSTOM_FIELD_ENTITY_TYPES.join(', '),
});
export const CustomFieldDataType = Type.Union(
  [Type.Literal('text'), Type.Literal('number'), Type.Literal('select'), Type.Literal('date'), Type.Literal('checkbox')],
  { description: CUSTOM_FIELD_DATA_TYPES.join(', ') },
);

const Key = Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'machine-readable name: lower case, digits, _' });
const Label = Type.String({ minLength: 1, maxLength: 200 });
const SortOrder = Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 });
const OptionBody = Type.Object(
  { value: Type.String({ minLength: 1, maxLength: 100 }), label: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);
const Options = Type.Array(OptionBody, { maxItems: 200, description: 'the choices of a select field (label defaults to value)' });

/**
 * Custom field values on an entity's create or update body. Keys are the definitions' keys; text, select and date
 * (`YYYY-MM-DD`) values are strings, number values numbers, checkbox values booleans. On update `null` removes a value.
 */
export const CustomFieldValuesBody = Type.Record(Type.String({ maxLength: 64 }), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
  maxProperties: 100,
  description: 'values by custom field key, checked against the active definitions of the entity type',
});

/** Custom field values as responses show them. */
export const CustomFieldValuesResponse = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]));

/** The search parameter that filters an entity's search by custom field values. */
export const CustomFieldFilterQuery = Type.String({
  maxLength: 2000,
  description: 'JSON object of custom field values that must all match exactly, e.g. {"priority":"high","fragile":true}',
});

export const CreateCustomFieldBody = Type.Object(
  {
    entity_type: CustomFieldEntityType,
    key: Key,
    label: Label,
    data_type: CustomFieldDataType,
    is_required: Type.Optional(Type.Boolean()),
    options: Type.Optional(Options),
    sort_order: Type.Optional(SortOrder),
  },
  { additionalProperties: false },
);

export const UpdateCustomFieldBody = Type.Object(
  {
    id: Id,
    label: Type.Optional(Label),
    is_required: Type.Optional(Type.Boolean()),
    is_active: Type.Optional(Type.Boolean()),
    options: Type.Optional(Options),
    sort_order: Type.Optional(SortOrder),
  },
  { additionalProperties: false, description: 'supplied fields change; entity_type, key and data_type never do' },
);

export const CustomFieldResponse = Type.Object(
  {
    id: Id,
    site_id: Id,
    entity_type: CustomFieldEntityType,
    key: Type.String(),
    label: Type.String(),
    data_type: CustomFieldDataType,
    is_required: Type.Boolean(),
    options: Type.Array(Type.Object({ value: Type.String(), label: Type.String() }, { additionalProperties: false })),
    sort_order: Type.Integer(),
    is_active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export function toCustomFieldResponse(d: CustomFieldDefinition) {
  return {
    id: d.id,
    site_id: d.siteId,
    entity_type: d.entityType,
    key: d.key,
    label: d.label,
    data_type: d.dataType,
    is_required: d.isRequired,
    options: d.options,
    sort_order: d.sortOrder,
    is_active: d.isActive,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  };
}
