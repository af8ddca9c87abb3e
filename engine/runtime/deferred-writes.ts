import type { EntityManager } from '@mikro-orm/postgresql';
import type { StatementText } from './direct-execute.ts';
import type { StatementPrefix } from './statement-prefix.ts';

/** Where a transaction's deferred statements wait to go out with its next statement. */
export type DeferredSink = {
  /** Queues a statement whose values are inlined. */
  statement(text: string): void;
  /** Queues a write with `?` placeholders and its values (the sink decides how they travel: inlined, or as a prepared statement's `execute`). */
  write(sql: string, params: readonly unknown[]): void;
};

const sinks = new WeakMap<EntityManager, DeferredSink>();

/** Lets writes on `em` (a command's transaction, or one unit of a pipelined batch) be queued on `sink`. */
export function allowDeferredWrites(em: EntityManager, sink: DeferredSink): void {
  sinks.set(em, sink);
}

/** A sink that queues on a statement prefix (a command's own transaction), each write as `text` makes it. */
export const prefixSink = (prefix: StatementPrefix, text: StatementText): DeferredSink => ({
  statement: (statement) => prefix.add(statement),
  write: (sql, params) => prefix.add(text(sql, params)),
});

/**
 * Queues statements (text with their values inlined) to go out with the transaction's next statement, at the latest its
 * COMMIT, in order with every other statement, instead of in a round trip of their own. Nobody sees their results, so
 * each must need none (no `returning`, and nothing depends on how many rows it changed: a conditional write, one whose
 * row this transaction has locked, or one that checks itself and raises); an error one raises fails that statement and
 * the transaction. False when `em` has no queue (then the caller sends them itself).
 */
export function deferStatements(em: EntityManager, ...statements: string[]): boolean {
  const sink = sinks.get(em);
  if (!sink) return false;
  for (const statement of statements) sink.statement(statement);
  return true;
}

/** {@link deferStatements} for one write with `?` placeholders and its values. */
export function deferWrite(em: EntityManager, sql: string, params: readonly unknown[]): boolean {
  const sink = sinks.get(em);
  sink?.write(sql, params);
  return sink !== undefined;
}

/** Sends a statement whose result nobody reads with the transaction's next one when it can ({@link deferWrite}), else at once. */
export async function sendWithNext(em: EntityManager, sql: string, params: readonly unknown[]): Promise<void> {
  if (!deferWrite(em, sql, params)) await em.execute(sql, [...params]);
}
