import type { EntityManager } from '@mikro-orm/postgresql';
import { asDriverException, formatSql } from '../runtime/direct-execute.ts';
import { queueOnConnection } from '../runtime/statement-prefix.ts';

/**
 * A statement of the dispatch path prepared once per connection: `$n` parameters, each cast where it is used
 * (`$2::text`), so PostgreSQL infers every type from the text alone. The name is unique per statement text.
 */
export type NamedStatement = { name: string; sql: string };

type PgResult = { rows: Record<string, unknown>[] };
type PgConnection = { query(config: { text: string }, callback: (error: Error | null, result: PgResult | PgResult[]) => void): unknown };

/** The statements each connection has prepared (a session keeps them until it closes, whatever its transactions do). */
const preparedOn = new WeakMap<PgConnection, Set<string>>();

/**
 * Runs `statement` with `args` in `em`'s transaction as `execute name(...)`: parsed, analysed and planned once per
 * connection instead of once per call (a dispatch's head read spent 1.3–2 ms planning for 0.4 ms of execution).
 * The plan is the generic one, forced for this statement only: with its values inlined the planner costs the
 * custom plan lower every time and would never switch. The text goes to the transaction's connection as one simple
 * query, so the command path's queued BEGIN and tenant settings still travel with it; `before` (statements whose
 * results are not wanted, e.g. a lock that must be held before this statement takes its snapshot) goes first in
 * the same round trip. The first use on a connection prepares the statement in a round trip of its own: PREPARE
 * outlives a rolled-back transaction, so it is never sent where a failure after it would leave it unrecorded.
 * Outside a transaction the statement is sent with its values inlined, unprepared.
 * @returns the statement's rows
 * @throws MikroORM's exception for a database error (a unique violation stays a race the engine retries)
 */
export async function executePrepared<Row>(em: EntityManager, statement: NamedStatement, args: unknown[], before?: string): Promise<Row[]> {
  const [rows] = await runPrepared<Row, never>(em, statement, args, before);
  return rows;
}

/** A statement with `?` placeholders and their values, as `em.execute` takes them. */
export type RawStatement = { sql: string; params: unknown[] };

/**
 * {@link executePrepared}, then `after` in the same round trip (a write that must come after the prepared read, e.g.
 * a claim's UPDATE after the head read that has to run before the transaction writes); outside a transaction, one
 * after the other. A failure of either fails the call.
 * @returns the prepared statement's rows and `after`'s rows
 */
export function executePreparedThen<Row, After>(em: EntityManager, statement: NamedStatement, args: unknown[], after: RawStatement): Promise<[Row[], After[]]> {
  return runPrepared<Row, After>(em, statement, args, undefined, after);
}

async function runPrepared<Row, After>(em: EntityManager, statement: NamedStatement, args: unknown[], before?: string, after?: RawStatement): Promise<[Row[], After[]]> {
  const connection = await transactionConnection(em);
  if (!connection) {
    if (before) await em.execute(before);
    const { text, params } = inlined(statement.sql, args);
    const rows = await em.execute<Row[]>(text, params);
    return [rows, after ? await em.execute<After[]>(after.sql, after.params) : []];
  }
  const call = await preparedCall(em, connection, statement, args, before);
  // In a command's transaction the lock and plan settings before the EXECUTE join the connection's queue, to go out
  // merged with the selects queued there (the tenant settings: statement-prefix.ts), not as selects of their own.
  // The settings are put back in the same round trip: a later statement with bind parameters would send a queue of
  // its own in a round trip of its own.
  const queued = queueOnConnection(connection, call.setUp);
  const tail = after ? [formatSql(em, after.sql, after.params)] : [];
  const results = await send(em, connection, [...(queued ? [] : call.setUp), call.execute, call.restore, ...tail].join('; '));
  return [results.at(after ? -3 : -2)!.rows as Row[], after ? (results.at(-1)!.rows as After[]) : []];
}

/**
 * The statements that run `statement` as {@link executePrepared} does (`before`, the generic plan, the EXECUTE, the
 * plan mode put back), for a caller that sends them itself (queued with the command's next statement); the
 * statement is prepared on the transaction's connection first if it is not yet (a round trip, once per connection).
 * @throws Error outside a transaction (nothing to prepare on)
 */
export async function preparedStatements(em: EntityManager, statement: NamedStatement, args: unknown[], before?: string): Promise<string[]> {
  const connection = await transactionConnection(em);
  if (!connection) throw new Error(`${statement.name}: a prepared statement to send later needs a transaction`);
  const call = await preparedCall(em, connection, statement, args, before);
  return [...call.setUp, call.execute, call.restore];
}

/** A prepared call's statements: `before` and the plan settings, the EXECUTE, the settings put back. */
type PreparedCall = { setUp: string[]; execute: string; restore: string };

async function preparedCall(em: EntityManager, connection: PgConnection, statement: NamedStatement, args: unknown[], before: string | undefined): Promise<PreparedCall> {
  let prepared = preparedOn.get(connection);
  if (!prepared) {
    prepared = new Set();
    preparedOn.set(connection, prepared);
  }
  if (!prepared.has(statement.name)) {
    await send(em, connection, `prepare ${statement.name} as ${statement.sql}`);
    prepared.add(statement.name);
  }
  const execute = formatSql(em, `execute ${statement.name}(${args.map(() => '?').join(', ')})`, args);
  return { setUp: before ? [before, GENERIC_PLAN] : [GENERIC_PLAN], execute, restore: PLAN_RESTORED };
}

/**
 * The session's plan mode and `enable_seqscan`, kept aside while this statement runs with a generic plan, then put
 * back. Sequential scans are off for it: every table it reads is found by an index (a stop's address by its primary
 * key), and a generic plan made on the statistics of near-empty tables (autovacuum late or off) otherwise scans a
 * table it believes to be a page long, and keeps doing so while the table grows.
 */
const GENERIC_PLAN =
  "select set_config('dispatch.plan_cache_mode', current_setting('plan_cache_mode'), true), set_config('dispatch.enable_seqscan', current_setting('enable_seqscan'), true), " +
  "set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)";
const PLAN_RESTORED = "select set_config('plan_cache_mode', current_setting('dispatch.plan_cache_mode'), true), set_config('enable_seqscan', current_setting('dispatch.enable_seqscan'), true)";

/** The connection under `em`'s transaction (knex's transaction client hands back its one connection), if any. */
async function transactionConnection(em: EntityManager): Promise<PgConnection | null> {
  const context = em.getTransactionContext<{ client?: { acquireConnection?(): Promise<PgConnection> } }>();
  return context?.client?.acquireConnection ? context.client.acquireConnection() : null;
}

function send(em: EntityManager, connection: PgConnection, text: string): Promise<PgResult[]> {
  return new Promise((resolve, reject) => {
    connection.query({ text }, (error, result) => (error ? reject(asDriverException(em, error)) : resolve(Array.isArray(result) ? result : [result])));
  });
}

/** `$n` placeholders as `?` with their values in order of appearance (a parameter may be used more than once). */
export function inlined(sql: string, args: unknown[]): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    params.push(args[Number(n) - 1]);
    return '?';
  });
  return { text, params };
}
