import type { EntityManager } from '@mikro-orm/postgresql';
import { formatSql } from './direct-execute.ts';
import type { StatementPrefix } from './statement-prefix.ts';

const prefixes = new WeakMap<EntityManager, StatementPrefix>();

/** Lets writes on `em` (a command's transaction) be queued on `prefix`, to go out with the transaction's next statement. */
export function allowDeferredWrites(em: EntityManager, prefix: StatementPrefix): void {
  prefixes.set(em, prefix);
}

/**
 * Queues a write whose result nobody reads (no `returning`, and nothing depends on how many rows it changed: a
 * conditional write, or one whose row this transaction has locked) to go out with the transaction's next statement, at the latest its COMMIT, in order with every other
 * statement; an error it raises fails that statement and the transaction. False when `em` has no queue (then the
 * caller sends it itself).
 */
export function deferWrite(em: EntityManager, sql: string, params: readonly unknown[]): boolean {
  const prefix = prefixes.get(em);
  if (!prefix) return false;
  prefix.add(formatSql(em, sql, params));
  return true;
}
