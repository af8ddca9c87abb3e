import * as fc from 'fast-check';
import { MikroORM, PostgreSqlDriver } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { inlineValues, stringLiteral } from '../../engine/runtime/inline-values.ts';

// The platform as the application configures it, without a connection: its formatQuery is the reference.
const orm = MikroORM.initSync({ driver: PostgreSqlDriver, dbName: 'inline_values', entities: [], discovery: { warnWhenNoEntities: false }, connect: false } as never);
const platform = orm.em.getPlatform();

const text = fc.string({ unit: fc.constantFrom('a', "'", '\\', '"', '?', 'é', '😀', ' ', '\n', '$', '{', '}'), maxLength: 40 });
const value = fc.oneof(
  text,
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
  fc.array(text, { minLength: 1, maxLength: 3 }),
);

describe('inlined statement values (the command path sends statements with their values inlined)', () => {
  it('quotes a string exactly as pg escapeLiteral does', () => {
    const pg = (platform as unknown as { escape(value: unknown): string }).escape.bind(platform);
    fc.assert(
      fc.property(text, (s) => {
        expect(stringLiteral(s)).toBe(pg(s));
      }),
      { numRuns: 2000 },
    );
    expect(stringLiteral("it's a \\ path")).toBe(" E'it''s a \\\\ path'");
  });

  it('writes the same statement text as the platform formatQuery, whatever the values and placeholders', () => {
    const sql = fc.array(fc.constantFrom('select ', '?', ', ', 'x = ?', ' (?)', "'?'", ' and '), { maxLength: 12 }).map((parts) => parts.join(' '));
    fc.assert(
      fc.property(sql, fc.array(value, { maxLength: 14 }), (statement, params) => {
        expect(inlineValues(platform, statement, params)).toBe(platform.formatQuery(statement, params));
      }),
      { numRuns: 3000 },
    );
  });

  it('leaves identifiers and escaped marks to the platform', () => {
    expect(inlineValues(platform, 'select ?? from t where a = ? and b \\? c', ['col', "o'k"])).toBe(platform.formatQuery('select ?? from t where a = ? and b \\? c', ['col', "o'k"]));
  });
});
