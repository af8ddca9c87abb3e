import type { EntityManager } from '@mikro-orm/postgresql';
import { formatSql } from './direct-execute.ts';
import type { StatementPrefix } from './statement-prefix.ts';

const prefixes = new WeakMap<EntityManager, StatementPrefix>();

/** Lets writes on `em` (a command's transaction) be queued on `prefix`, to go out with the transaction's next statement. */
export function allowDeferredWrites(em: EntityManager, prefix: StatementPrefix): void {
  prefixes.set(em, prefix);
}

/**
 * Queues statements (text with their values inlined) to go out with the transaction's next statement, at the latest its
 * COMMIT, in order with every other statement, instead of in a round trip of their own. Nobody sees their results, so
 * each must need none (no `returning`, and nothing depends on how many rows it changed: a conditional write, one whose
 * row this transaction has locked, or one that checks itself and raises); an error one raises fails that statement and
 * the transaction. False when `em` has no queue (then the caller sends them itself).
 */
export function deferStatements(em: EntityManager, ...statements: string[]): boolean {
  const prefix = prefixes.get(em);
  if (!prefix) return false;
  for (const statement of statements) prefix.add(statement);
  return true;
}

/** {@link deferStatements} for one write with `?` placeholders and its values. */
export function deferWrite(em: EntityManager, sql: string, params: readonly unknown[]): boolean {
  return prefixes.has(em) && deferStatements(em, formatSql(em, sql, params));
}

/** Sends a statement whose result nobody reads with the transaction's next one when it can ({@link deferWrite}), else at once. */
export async function sendWithNext(em: EntityManager, sql: string, params: readonly unknown[]): Promise<void> {
  if (!deferWrite(em, sql, params)) await em.execute(sql, [...params]);
}
