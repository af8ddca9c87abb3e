import type { MikroORM } from '@mikro-orm/postgresql';

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
  const pool = orm.em.getConnection().getKnex().client as Pool;
  const client = await pool.acquireConnection();
  try {
    const literal: Literal = (value) => client.escapeLiteral(value);
    const site = literal(siteId);
    const settings = `select set_config('app.site_id', ${site}, true), set_config('app.user_id', '', true), set_config('app.platform', '', true)`;
    const results = await client.query(`${settings}; ${build(literal)}`);
    return (Array.isArray(results) ? results.at(-1)!.rows : results.rows) as Row[];
  } finally {
    await pool.releaseConnection(client);
  }
}

/** A finite number as an SQL literal; anything else is refused (values are inlined, so nothing unchecked goes in). */
export function numberLiteral(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
  return String(value);
}

/** An optional number as an SQL literal (`null` when absent). */
export const optionalNumberLiteral = (value: number | undefined | null): string => (value === undefined || value === null ? 'null' : numberLiteral(value));
