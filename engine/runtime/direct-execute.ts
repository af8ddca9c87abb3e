import type { EntityManager } from '@mikro-orm/postgresql';
import { inlineValues, type InliningPlatform } from './inline-values.ts';
import type { StatementPrefix } from './statement-prefix.ts';
import { RoundsAborted } from './statement-rounds.ts';

type Method = 'all' | 'get' | 'run';
type Internals = {
  getPlatform(): InliningPlatform;
  getDriver(): { convertException(error: Error): Error };
  getConnection(): { transformRawResult(result: unknown, method: Method): unknown };
};

/** `sql` with `params` inlined as MikroORM itself inlines them (the text it would send). */
export function formatSql(em: EntityManager, sql: string, params: readonly unknown[]): string {
  return inlineValues(platformOf(em), sql, params);
}

/** The platform that quotes `em`'s values. */
export const platformOf = (em: EntityManager): InliningPlatform => (em as unknown as Internals).getPlatform();

/** Sends one raw SQL statement (`?` placeholders and their values) and resolves with `pg`'s result. */
export type RawSender = (sql: string, params: readonly unknown[]) => Promise<unknown>;

/**
 * A raw `pg` error (it has an SQLSTATE `code` and a `severity`) as MikroORM's exception class for it, so a unique
 * violation that a deferred constraint raised at COMMIT is still a UniqueConstraintViolationException (a race the
 * engine retries); anything else is returned as it is.
 */
export function asDriverException(em: EntityManager, error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  if (typeof code !== 'string' || typeof severity !== 'string') return error;
  return (em as unknown as Internals).getDriver().convertException(error);
}

/**
 * Makes `em.execute(sql, params, method)` (the raw SQL the command path writes with) go straight to the
 * transaction's connection: the same text MikroORM would send (values inlined by the platform), the same result
 * shapes and the same exception classes (a unique violation is still a UniqueConstraintViolationException), without
 * the ORM's and knex's per-statement machinery, and with the unit's queued savepoint in the same round trip. Other
 * calls (a knex builder instead of a string) and the ORM's own queries take the usual path. With `text`, a
 * statement may go as a prepared statement's `execute name(values)` (parsed and planned once per session).
 */
export function executeDirectly(em: EntityManager, prefix: StatementPrefix, text?: StatementText): void {
  const platform = platformOf(em);
  const textOf = text ?? ((sql: string, params: readonly unknown[]) => inlineValues(platform, sql, params));
  installExecute(em, em, (sql, params) => prefix.run(textOf(sql, params)));
}

/** The text that runs `sql` (`?` placeholders) with `params`: inlined, or a prepared statement's `execute`. */
export type StatementText = (sql: string, params: readonly unknown[]) => string;

/**
 * A view of `em` (its state and methods, through the prototype) whose raw SQL strings are sent by `send`, as
 * {@link executeDirectly} sends them: one unit's own `execute` over an EntityManager it shares with other units.
 */
export function executeThrough(em: EntityManager, send: RawSender): EntityManager {
  const view = Object.create(em) as EntityManager;
  installExecute(view, em, send);
  return view;
}

function installExecute(target: EntityManager, em: EntityManager, send: RawSender): void {
  const internals = em as unknown as Internals;
  const connection = internals.getConnection();
  const driver = internals.getDriver();
  const usual = em.execute.bind(em);
  const direct = async (query: unknown, params: readonly unknown[] = [], method: Method = 'all', ...rest: unknown[]): Promise<unknown> => {
    if (typeof query !== 'string' || rest.length > 0) return (usual as (...args: unknown[]) => Promise<unknown>)(query, params, method, ...rest);
    try {
      const result = await send(query, params);
      return connection.transformRawResult(result, method);
    } catch (error) {
      // The pipelined batch's own abort is not the database's error: it passes as it is.
      if (error instanceof RoundsAborted) throw error;
      throw driver.convertException(error as Error);
    }
  };
  (target as unknown as { execute: typeof direct }).execute = direct;
}
