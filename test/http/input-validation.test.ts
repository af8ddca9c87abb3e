import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../http/errors.ts';
import { parseInput } from '../../http/validation.ts';

const Paging = Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })), q: Type.Optional(Type.String()) }, { additionalProperties: false });
const Nested = Type.Object({ stops: Type.Array(Type.Object({ kind: Type.String({ default: 'pickup' }), lat: Type.Number() })) }, { additionalProperties: false });
const Plain = Type.Object({ lat: Type.Number(), lng: Type.Number(), note: Type.Optional(Type.String()) }, { additionalProperties: false });

function failure(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  throw new Error('expected a validation failure');
}

describe('request input', () => {
  it('gets the defaults its schema names, at any depth', () => {
    expect(parseInput(Paging, {}, 'query')).toEqual({ page: 1 });
    expect(parseInput(Paging, { page: '3' }, 'query')).toEqual({ page: 3 });
    expect(parseInput(Nested, { stops: [{ lat: 1 }, { kind: 'dropoff', lat: 2 }] }, 'body')).toEqual({
      stops: [
        { kind: 'pickup', lat: 1 },
        { kind: 'dropoff', lat: 2 },
      ],
    });
  });

  it('without defaults in its schema comes back as it was sent', () => {
    const body = { lat: 52.5, lng: 13.4 };
    expect(parseInput(Plain, body, 'body')).toEqual({ lat: 52.5, lng: 13.4 });
    expect(body).toEqual({ lat: 52.5, lng: 13.4 });
  });

  it('is refused naming each wrong, missing or unknown field, with or without defaults', () => {
    const plain = failure(() => parseInput(Plain, { lat: 'north', extra: 1 }, 'body'));
    expect(plain.status).toBe(400);
    expect(plain.toBody()).toMatchObject({ code: 'VALIDATION_FAILED' });
    const fields = JSON.stringify(plain.toBody());
    for (const field of ['lat', 'lng', 'extra']) expect(fields).toContain(field);
    const nested = failure(() => parseInput(Nested, { stops: [{ kind: 'pickup' }] }, 'body'));
    expect(JSON.stringify(nested.toBody())).toContain('stops.0.lat');
  });
});
