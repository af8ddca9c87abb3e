import * as fc from 'fast-check';
import type { TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../http/errors.ts';
import { describeErrors, validatorFor } from '../../http/validation.ts';
import { LocationBatch, LocationFix } from '../../realtime/events.ts';
import { isCommonFix, parseLocationBatch, parseLocationFix } from '../../realtime/fix-validation.ts';

/**
 * The socket path's fast check of a fix must accept exactly what the TypeBox schema (REST's) accepts, and refuse the
 * rest with REST's error body: checked on random payloads that mix valid and invalid fields, times near the edges of
 * the calendar and the clock, and shapes that are not fixes at all.
 */

/** What the schema's own validator answers: accepted, or the REST error body. */
function bySchema(schema: TSchema, payload: unknown): { accepted: true } | { accepted: false; body: unknown } {
  const validator = validatorFor(schema);
  return validator.Check(payload) ? { accepted: true } : { accepted: false, body: ApiError.validation(describeErrors(validator, payload)).toBody() };
}

function byParser(parse: (payload: unknown) => unknown, payload: unknown): { accepted: true } | { accepted: false; body: unknown } {
  try {
    parse(payload);
    return { accepted: true };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { accepted: false, body: error.toBody() };
  }
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** Times in the form apps send and around it: every field sometimes out of range, other separators and zones. */
const timeText = fc
  .record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.integer({ min: 0, max: 61 }),
    fraction: fc.constantFrom('', '.5', '.123', '.123456', '.'),
    separator: fc.constantFrom('T', 'T', 't', ' '),
    zone: fc.constantFrom('Z', 'Z', 'z', '+01:00', '-23:59', '+24:00', '', ' Z'),
  })
  .map((t) => `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)}${t.separator}${pad(t.hour, 2)}:${pad(t.minute, 2)}:${pad(t.second, 2)}${t.fraction}${t.zone}`);

const recordedAt = fc.oneof(
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  timeText,
  fc.constantFrom('2024-02-29T12:00:00.000Z', '2023-02-29T12:00:00.000Z', '2100-02-29T00:00:00Z', '2000-02-29T00:00:00Z', '2024-04-31T00:00:00Z', '2016-12-31T23:59:60Z', '2024-01-01T00:00:00.000Z\n'),
  fc.string(),
  fc.anything(),
);

const numberish = fc.oneof(
  fc.double(),
  fc.integer({ min: -400, max: 400 }),
  fc.constantFrom(-90, 90, -180, 180, 0, -0, 360, 150, 100_000, -0.0001, 90.0001, Number.NaN, Infinity, -Infinity),
  fc.anything(),
);

/** Any subset of the fields (each valid or not), sometimes with a field the schema does not know. */
const fixLike = fc.record(
  { lat: numberish, lng: numberish, heading: numberish, speed: numberish, accuracy: numberish, recorded_at: recordedAt, site_id: fc.string() },
  { requiredKeys: [] },
);

/** Fixes as a driver app sends them: every one must take the fast path. */
const appFix = fc.record(
  {
    lat: fc.double({ min: -90, max: 90, noNaN: true }),
    lng: fc.double({ min: -180, max: 180, noNaN: true }),
    heading: fc.double({ min: 0, max: 360, noNaN: true }),
    speed: fc.double({ min: 0, max: 150, noNaN: true }),
    accuracy: fc.double({ min: 0, max: 100_000, noNaN: true }),
    recorded_at: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }).map((date) => date.toISOString()),
  },
  { requiredKeys: ['lat', 'lng', 'recorded_at'] },
);

const payload = fc.oneof(fixLike, appFix, fc.anything());

describe('socket fix validation', () => {
  it('accepts and refuses a single fix exactly as the schema does, with the same error body', () => {
    fc.assert(
      fc.property(payload, (value) => {
        expect(byParser(parseLocationFix, value)).toEqual(bySchema(LocationFix, value));
      }),
      { numRuns: 5000 },
    );
  });

  it('accepts and refuses a batch exactly as the schema does, naming `<index>.<field>` alike', () => {
    const batch = fc.oneof(fc.array(fc.oneof(appFix, fixLike), { maxLength: 6 }), fc.array(appFix, { maxLength: 3 }), fc.anything());
    fc.assert(
      fc.property(batch, (value) => {
        expect(byParser(parseLocationBatch, value)).toEqual(bySchema(LocationBatch, value));
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses batches of no fix or more than 500 as the schema does', () => {
    const fix = { lat: 1, lng: 2, recorded_at: '2024-05-01T10:00:00.000Z' };
    for (const length of [0, 1, 500, 501]) {
      const value = Array.from({ length }, () => ({ ...fix }));
      expect(byParser(parseLocationBatch, value)).toEqual(bySchema(LocationBatch, value));
    }
    expect(byParser(parseLocationBatch, [])).toMatchObject({ accepted: false, body: { code: 'VALIDATION_FAILED' } });
  });

  it('never calls a fix valid that the schema refuses', () => {
    fc.assert(
      fc.property(payload, (value) => {
        expect(!isCommonFix(value) || validatorFor(LocationFix).Check(value)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('takes the fast path for fixes as apps send them', () => {
    fc.assert(
      fc.property(appFix, (value) => {
        expect(isCommonFix(value)).toBe(true);
      }),
    );
  });

  it('leaves to the schema what it accepts outside the common form', () => {
    const accepted = ['2024-05-01T10:00:00+02:00', '2024-05-01t10:00:00z'];
    for (const recorded_at of accepted) {
      const value = { lat: 1, lng: 2, recorded_at };
      expect(isCommonFix(value)).toBe(false);
      expect(byParser(parseLocationFix, value)).toEqual({ accepted: true });
    }
    // RFC 3339 but no time Date can read: refused by the schema as any such date-time.
    const leap = { lat: 1, lng: 2, recorded_at: '2016-12-31T23:59:60Z' };
    expect(isCommonFix(leap)).toBe(false);
    expect(byParser(parseLocationFix, leap)).not.toEqual({ accepted: true });
  });
});
