import { Type, type TSchema } from 'typebox';

/** Shared response and parameter shapes. */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'human-readable message (the same text as message, kept for compatibility)' }),
    message: Type.String({ description: 'human-readable message' }),
    code: Type.String({ pattern: '^[A-Z][A-Z0-9_]*$', description: 'UPPER_SNAKE error code' }),
    description: Type.Optional(Type.String({ description: 'detailed text' })),
    fields: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'machine-readable facts, e.g. allowed moves' })),
  },
  { $id: 'Error', additionalProperties: false },
);

export const Point = Type.Object({ lat: Type.Number({ minimum: -90, maximum: 90 }), lng: Type.Number({ minimum: -180, maximum: 180 }) }, { additionalProperties: false });

export const Id = Type.String({ minLength: 1, maxLength: 64 });
export const IdQuery = Type.Object({ id: Id }, { additionalProperties: false });
export const Timestamp = Type.String({ format: 'date-time' });
/** One failed item of a bulk call (the spec's `failed` part): its id, the error and its code. */
export const BulkFailure = Type.Object({ id: Type.String(), error: Type.String(), code: Type.String() }, { additionalProperties: false });

/** Optional and nullable: the three-state field of PATCH-like updates (value sets, null clears, absent keeps). */
export function Clearable<T extends TSchema>(schema: T) {
  return Type.Optional(Type.Union([schema, Type.Null()]));
}

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export function DataResponse<T extends TSchema>(item: T) {
  return Type.Object({ data: item }, { additionalProperties: false });
}

export const Deleted = DataResponse(Type.Object({ id: Id, deleted: Type.Literal(true) }, { additionalProperties: false }));
