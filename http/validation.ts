import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { Format } from 'typebox/format';
import { ApiError, type FieldError } from './errors.ts';

// TypeBox's date-time also takes leap seconds (`23:59:60Z`) and RFC 9557 suffixes (`Z[Europe/Paris]`), which Date
// cannot read: such a value passed validation and became an Invalid Date further on (a 500). Every date-time we
// accept is also one Date reads; set once, before any schema compiles, for REST, sockets and MCP alike.
// It must also be an instant PostgreSQL and toISOString() agree on: a UTC year 0001..9999. At the edges an offset
// moves the instant out of it (`0000-01-01T00:00:00Z` is a year 0 PostgreSQL has not, `9999-12-31T23:30:00-01:00`
// is year 10000, `+010000-...`), which validated and then failed the insert (a 500).
const rfc3339 = Format.Get('date-time')!;
const FIRST_INSTANT_MS = Date.parse('0001-01-01T00:00:00Z');
const LAST_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');
Format.Set('date-time', (value) => {
  if (!rfc3339(value)) return false;
  const ms = Date.parse(value);
  return ms >= FIRST_INSTANT_MS && ms <= LAST_INSTANT_MS;
});

const validators = new WeakMap<TSchema, Validator>();
/** Whether a schema names any default value, per schema object (see parseInput). */
const withDefaults = new WeakMap<TSchema, boolean>();

/** A compiled validator per schema object, compiled once. */
export function validatorFor(schema: TSchema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = Compile(schema);
    validators.set(schema, validator);
  }
  return validator;
}

/**
 * Validates input against its schema and returns it with defaults applied. Query strings are converted first
 * (`'5'` → 5). Unknown fields fail validation, so a client can never smuggle `site_id`, `role` or `id` in.
 * @throws ApiError 400 VALIDATION_FAILED naming every failing field
 */
export function parseInput<T>(schema: TSchema, value: unknown, source: 'body' | 'query'): T {
  const validator = validatorFor(schema);
  const converted = source === 'query' ? validator.Convert(value) : value;
  // Defaulting walks the whole value to patch it in place; a schema without defaults leaves it as it is.
  const defaulted = hasDefaults(schema) ? validator.Default(converted) : converted;
  if (validator.Check(defaulted)) return defaulted as T;
  throw ApiError.validation(describeErrors(validator, defaulted));
}

/** Whether `default` appears anywhere in the schema (a property named `default` counts too: it only costs time). */
function hasDefaults(schema: TSchema): boolean {
  let known = withDefaults.get(schema);
  if (known === undefined) {
    known = namesDefault(schema, new Set());
    withDefaults.set(schema, known);
  }
  return known;
}

function namesDefault(node: unknown, seen: Set<object>): boolean {
  if (typeof node !== 'object' || node === null || seen.has(node)) return false;
  seen.add(node);
  if (!Array.isArray(node) && Object.hasOwn(node, 'default')) return true;
  return Object.values(node).some((child) => namesDefault(child, seen));
}

/** The schema errors of a value as field errors: the first message per field, anyOf noise removed. */
export function describeErrors(validator: Validator, value: unknown): FieldError[] {
  const byField = new Map<string, string>();
  for (const error of validator.Errors(value)) {
    for (const fieldError of toFieldErrors(error)) {
      if (!byField.has(fieldError.field)) byField.set(fieldError.field, fieldError.message);
    }
  }
  return [...byField].map(([field, message]) => ({ field, message }));
}

type RawError = { keyword: string; instancePath: string; params: Record<string, unknown>; message: string };

function toFieldErrors(error: RawError): FieldError[] {
  const base = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const join = (name: string) => (base ? `${base}.${name}` : name);
  if (error.keyword === 'required') {
    const names = (error.params.requiredProperties as string[] | undefined) ?? [];
    return names.map((name) => ({ field: join(name), message: 'is required' }));
  }
  if (error.keyword === 'additionalProperties') {
    const names = (error.params.additionalProperties as string[] | undefined) ?? [];
    return names.map((name) => ({ field: join(name), message: 'is not a known field' }));
  }
  if (error.keyword === 'boolean') return [{ field: base || 'body', message: 'is not a known field' }];
  return [{ field: base || 'body', message: error.message }];
}
