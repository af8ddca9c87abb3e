import type { TSchema } from 'typebox';
import type { LocationPing } from '../engine/drivers/driver-location.ts';
import { ApiError } from '../http/errors.ts';
import { describeErrors, validatorFor } from '../http/validation.ts';
import { LocationBatch, LocationFix } from './events.ts';

/**
 * Validation of `location` and `locations` payloads for the socket path, where every fix of every driver passes
 * through it. What a driver app sends is almost always the same shape: a plain object with numbers in range and
 * `recorded_at` as `Date.prototype.toISOString()` writes it. That shape is recognised by a few comparisons
 * ({@link isCommonFix}) without TypeBox's generic checks (its `date-time` format splits the string and runs three
 * regular expressions per fix). Anything else, valid or not, goes to the TypeBox validator of `LocationFix` /
 * `LocationBatch`, so what is refused and the error bodies are exactly REST's.
 *
 * For payloads parsed from JSON (as socket.io's are: every own field enumerable), the fast check only ever says
 * "valid" when TypeBox would (test/realtime/fix-validation.test.ts checks it on random inputs); when it says no,
 * TypeBox decides. An object built in code with a non-enumerable extra field would pass it and fail TypeBox.
 */

/** @throws ApiError 400 VALIDATION_FAILED naming the fields, as REST does */
export function parseLocationFix(payload: unknown): LocationPing[] {
  if (isCommonFix(payload)) return [payload as LocationPing];
  return [checkedBy(LocationFix, payload) as LocationPing];
}

/** @throws ApiError 400 VALIDATION_FAILED naming the fields (`<index>.<field>`), as REST does */
export function parseLocationBatch(payload: unknown): LocationPing[] {
  if (isCommonBatch(payload)) return payload as LocationPing[];
  return checkedBy(LocationBatch, payload) as LocationPing[];
}

/** The bounds of `LocationBatch`'s length. */
const { minItems: MIN_BATCH, maxItems: MAX_BATCH } = LocationBatch as unknown as { minItems: number; maxItems: number };

function isCommonBatch(payload: unknown): boolean {
  if (!Array.isArray(payload) || payload.length < MIN_BATCH || payload.length > MAX_BATCH) return false;
  for (let i = 0; i < payload.length; i += 1) if (!isCommonFix(payload[i])) return false;
  return true;
}

function checkedBy(schema: TSchema, payload: unknown): unknown {
  const validator = validatorFor(schema);
  if (!validator.Check(payload)) throw ApiError.validation(describeErrors(validator, payload));
  return payload;
}

/** The bounds of `LocationBody`'s numbers, read from the schema so the two cannot drift apart. */
const RANGES = Object.fromEntries(
  (['lat', 'lng', 'heading', 'speed', 'accuracy'] as const).map((name) => {
    const schema = LocationFix.properties[name] as unknown as { minimum: number; maximum: number };
    return [name, { min: schema.minimum, max: schema.maximum }];
  }),
) as Record<'lat' | 'lng' | 'heading' | 'speed' | 'accuracy', { min: number; max: number }>;

const inRange = (value: unknown, range: { min: number; max: number }): boolean => typeof value === 'number' && value >= range.min && value <= range.max;

/**
 * Whether `value` is a fix in the common shape that the schema surely accepts: a plain object with no other fields
 * than the schema's, `lat` and `lng` (and `heading`, `speed`, `accuracy` when present) numbers in range (NaN fails
 * every comparison), and `recorded_at` a canonical UTC time. False says nothing: TypeBox decides then.
 */
export function isCommonFix(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  // A parsed JSON object, or one without a prototype: nothing inherited can stand in for a field.
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const fix = value as Record<string, unknown>;
  let fields = 0;
  for (const key in fix) {
    if (!Object.hasOwn(fix, key)) return false;
    fields += 1;
  }
  let optional = 0;
  if ('heading' in fix) {
    if (!inRange(fix.heading, RANGES.heading)) return false;
    optional += 1;
  }
  if ('speed' in fix) {
    if (!inRange(fix.speed, RANGES.speed)) return false;
    optional += 1;
  }
  if ('accuracy' in fix) {
    if (!inRange(fix.accuracy, RANGES.accuracy)) return false;
    optional += 1;
  }
  // Three required fields and the optional ones found: any other field makes the count differ.
  return fields === 3 + optional && inRange(fix.lat, RANGES.lat) && inRange(fix.lng, RANGES.lng) && isCanonicalUtc(fix.recorded_at);
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, the form `toISOString()` writes (for years 0000–9999), with every field in
 * range: an RFC 3339 date-time, so TypeBox's `date-time` format accepts it. The day is checked against its month
 * (the pattern allows 31 everywhere). Leap seconds (`:60`), offsets, lower-case `t`/`z` and year 0000 (which the
 * format refuses: http/validation.ts) are left to TypeBox.
 */
const CANONICAL_UTC = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?Z$/;

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isCanonicalUtc(value: unknown): boolean {
  if (typeof value !== 'string' || !CANONICAL_UTC.test(value) || value.startsWith('0000')) return false;
  const day = digits(value, 8);
  if (day <= 28) return true;
  const month = digits(value, 5);
  if (month !== 2) return day <= DAYS_IN_MONTH[month]!;
  const year = digits(value, 0) * 100 + digits(value, 2);
  return day === 29 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/** The two-digit number at `at` (the pattern has checked they are digits). */
const digits = (text: string, at: number): number => (text.charCodeAt(at) - 48) * 10 + (text.charCodeAt(at + 1) - 48);
