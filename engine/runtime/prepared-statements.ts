import { inlineValues, numberedPlaceholders, quoteParam, type InliningPlatform } from './inline-values.ts';
import type { PgConnection } from './statement-prefix.ts';
import { isStalePlanError } from './statement-rounds.ts';

/** Statement names by SQL text (`?` placeholders), the same on every connection. */
const names = new Map<string, string>();
/** SQL texts PostgreSQL would not prepare (a parameter whose type it cannot infer): sent inline from then on. */
const unpreparable = new Set<string>();
/** Distinct statements named at most, and prepared per connection at most: generated SQL must not grow sessions without bound. */
const MOST_NAMES = 256;
const MOST_PER_CONNECTION = 64;

type Candidate = { sql: string; numbered: string };

/**
 * The command path's statements prepared on one pooled connection (a session keeps them until it closes, whatever
 * its transactions do). A statement is sent inline the first time it runs on a connection and prepared after the
 * batch that sent it (`sync`, outside any transaction: PREPARE is not transactional, so it never travels with
 * statements that could fail after it); from then on it is sent as `execute name(args)`, and PostgreSQL parses and
 * plans it once per session instead of at every execution (about 60% of an entity update's server CPU).
 *
 * A failed round that executed prepared statements may have failed because of one of them (a plan that can no longer
 * serve, such as `returning *` after a column was added): `forgetAll` has the next `sync` deallocate them (ours
 * only: the session may hold other prepared statements).
 * As with the location path, a connection pooler in front of PostgreSQL must keep sessions per client connection.
 */
export class PreparedStatements {
  private readonly prepared = new Set<string>();
  private readonly wanted = new Map<string, Candidate>();
  private deallocate = false;

  static of(connection: PgConnection): PreparedStatements {
    let statements = byConnection.get(connection);
    if (!statements) {
      statements = new PreparedStatements();
      byConnection.set(connection, statements);
    }
    return statements;
  }

  /** The name to `execute` for `sql` when it is prepared on this connection; otherwise null, and it is prepared at the next `sync` if it can be. */
  nameFor(sql: string, numbered: () => string | null): string | null {
    if (this.prepared.has(sql)) return names.get(sql)!;
    if (unpreparable.has(sql) || this.wanted.has(sql) || this.prepared.size + this.wanted.size >= MOST_PER_CONNECTION) return null;
    if (!names.has(sql) && names.size >= MOST_NAMES) return null;
    const text = numbered();
    if (text === null) unpreparable.add(sql);
    else this.wanted.set(sql, { sql, numbered: text });
    return null;
  }

  /**
   * The text that runs `sql` (`?` placeholders) with `params` on this connection: `execute name(values)` when it is
   * prepared here, otherwise the statement with its values inlined (and it is prepared at the next `sync`).
   */
  textFor(platform: InliningPlatform, sql: string, params: readonly unknown[]): { text: string; prepared: boolean } {
    const name = this.nameFor(sql, () => numberedPlaceholders(sql, params));
    if (name === null) return { text: inlineValues(platform, sql, params), prepared: false };
    const args = params.length > 0 ? `(${params.map((value) => quoteParam(platform, value)).join(', ')})` : '';
    return { text: `execute ${name}${args}`, prepared: true };
  }

  /** Deallocates every statement at the next `sync` (after a failed round that executed some). */
  forgetAll(): void {
    this.deallocate = true;
    this.wanted.clear();
  }

  /**
   * Outside any transaction, on the connection these belong to: deallocates after `forgetAll`, then prepares the
   * statements wanted since the last sync, each in its own query (one that PostgreSQL cannot prepare is never tried again).
   */
  async sync(connection: PgConnection): Promise<void> {
    if (this.deallocate) {
      this.deallocate = false;
      // Ours only, by name: the session may hold other code's prepared statements (the location path's).
      const ours = [...this.prepared];
      this.prepared.clear();
      for (const sql of ours) await query(connection, `deallocate ${names.get(sql)!}`).catch(() => undefined);
    }
    const wanted = [...this.wanted.values()];
    this.wanted.clear();
    // One after another: `pg` no longer wants queries queued on a busy client.
    for (const { sql, numbered } of wanted) {
      let name = names.get(sql);
      if (!name) {
        name = `engine_stmt_${names.size + 1}`;
        names.set(sql, name);
      }
      try {
        await query(connection, `prepare ${name} as ${numbered}`);
        this.prepared.add(sql);
      } catch (error) {
        const code = String((error as { code?: unknown }).code ?? '');
        // Already prepared (a DEALLOCATE that failed): usable. A statement PostgreSQL cannot prepare (class 42: a
        // parameter whose type it cannot infer) is never tried again; anything else (a lock timeout, a dropped
        // connection) is this connection's trouble, and the statement may be wanted again later.
        if (code === '42P05') this.prepared.add(sql);
        else if (code.startsWith('42')) unpreparable.add(sql);
      }
    }
  }
}

const byConnection = new WeakMap<PgConnection, PreparedStatements>();

/**
 * `inPooledTransaction`'s `beforeRelease` for work that sent statements through {@link PreparedStatements.textFor}:
 * after a failure on a prepared statement whose plan a schema change outdated, the session's statements are
 * deallocated (and prepared again as they are next sent); then, out of the transaction, the statements first sent
 * in it are prepared for the next transactions on this session.
 */
export async function prepareAfterTransaction(connection: PgConnection, failure: unknown): Promise<void> {
  const prepared = PreparedStatements.of(connection);
  if (isStalePlanError(failure)) prepared.forgetAll();
  await prepared.sync(connection);
}

const query = (connection: PgConnection, text: string): Promise<unknown> =>
  new Promise((resolve, reject) => {
    connection.query({ text }, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result)));
  });
