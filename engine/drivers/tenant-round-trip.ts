import type { MikroORM } from '@mikro-orm/postgresql';
import { tenantSettingsSql } from '../../persistence/tenant-scope.ts';

/** The bits of a pooled `pg` client used here. */
type PgClient = { query(text: string): Promise<PgResult | PgResult[]>; escapeLiteral(value: string): string };
type PgResult = { rows: Record<string, unknown>[] };
type Pool = { acquireConnection(): Promise<PgClient>; releaseConnection(client: PgClient): Promise<unknown> };

/** Quotes a string as an SQL literal (the connection's own quoting, so standard_conforming_strings is honoured). */
export type Literal = (value: string) => string;

/**
 * Runs one statement as its own transaction bound to a site, in ONE round trip: the tenant settings that
 * row-level security reads and the statement go out as a single simple-protocol query, which PostgreSQL runs as one
 * implicit transaction (both or neither; `set_config(..., true)` lasts until its end) and commits before it answers,
 * so a resolved promise means committed. The ORM's transaction costs four round trips (BEGIN, settings, statement,
 * COMMIT) and about a millisecond of CPU, which at hundreds of small batches a second was most of the location
 * path's cost. The statement's values must be inlined: `build` gets the connection's quoting for strings.
 * @returns the statement's rows
 */
export async function inTenantRoundTrip<Row>(orm: MikroORM, siteId: string, build: (literal: Literal) => string): Promise<Row[]> {
  return onPooledConnection(orm, (client, literal) => lastRows<Row>(client.query(`${tenantSettingsSql({ siteId, userId: null }, literal)}; ${build(literal)}`)));
}

/** A statement prepared once per pooled connection and run with `execute`: `types` are its parameters' types. */
export type PreparedStatement = { name: string; types: string[]; sql: string };

/**
 * How PostgreSQL plans a prepared statement's execution (its `plan_cache_mode`, for that transaction only): `generic`
 * reuses the plan the connection made at its first generic execution (no planning per call), `custom` plans again
 * with the actual arguments and the table's current size.
 */
export type PlanMode = 'generic' | 'custom';

/** The statements each pooled connection has prepared (a session keeps them until it closes). */
const preparedOn = new WeakMap<PgClient, Set<string>>();

/**
 * {@link inTenantRoundTrip} for a prepared statement: `execute name(args)` with the tenant settings, one round trip
 * and one implicit transaction. The first use on a connection prepares the statement in a round trip of its own
 * (PREPARE is not transactional, so it is never sent with a statement that could fail after it). `args` are
 * literals (the connection's quoting for strings), so the statement is parsed once per connection instead of once
 * per call.
 * @returns the statement's rows
 */
export async function executeInTenantRoundTrip<Row>(
  orm: MikroORM,
  siteId: string,
  statement: PreparedStatement,
  plan: PlanMode,
  args: (literal: Literal) => string[],
): Promise<Row[]> {
  return onPooledConnection(orm, async (client, literal) => {
    let prepared = preparedOn.get(client);
    if (!prepared) {
      prepared = new Set();
      preparedOn.set(client, prepared);
    }
    if (!prepared.has(statement.name)) {
      await client.query(`prepare ${statement.name} (${statement.types.join(', ')}) as ${statement.sql}`);
      prepared.add(statement.name);
    }
    const settings = `${tenantSettingsSql({ siteId, userId: null }, literal)}, set_config('plan_cache_mode', 'force_${plan}_plan', true)`;
    return lastRows<Row>(client.query(`${settings}; execute ${statement.name}(${args(literal).join(', ')})`));
  });
}

/**
 * What `escapeLiteral` changes: a quote or a backslash. Without either it returns the text between quotes, so that is
 * answered at once; its per-character loop over a batch's array literals (hundreds of KB at capacity) cost ~5% of
 * the location path's CPU.
 */
const NEEDS_ESCAPING = /['\\]/;

/** `escape(value)` (the connection's quoting), answered at once for text that has nothing for it to change. */
export function quoteLiteral(value: string, escape: (value: string) => string): string {
  return NEEDS_ESCAPING.test(value) ? escape(value) : `'${value}'`;
}

async function onPooledConnection<T>(orm: MikroORM, work: (client: PgClient, literal: Literal) => Promise<T>): Promise<T> {
  const pool = orm.em.getConnection().getKnex().client as Pool;
  const client = await pool.acquireConnection();
  try {
    return await work(client, (value) => quoteLiteral(value, (text) => client.escapeLiteral(text)));
  } finally {
    await pool.releaseConnection(client);
  }
}

async function lastRows<Row>(query: Promise<PgResult | PgResult[]>): Promise<Row[]> {
  const results = await query;
  return (Array.isArray(results) ? results.at(-1)!.rows : results.rows) as Row[];
}

/** A finite number as an SQL literal; anything else is refused (values are inlined, so nothing unchecked goes in). */
export function numberLiteral(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
  return String(value);
}

/** An optional number as an SQL literal (`null` when absent). */
export const optionalNumberLiteral = (value: number | undefined | null): string => (value === undefined || value === null ? 'null' : numberLiteral(value));
