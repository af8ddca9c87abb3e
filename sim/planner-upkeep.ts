/** Runs one SQL statement on the run's database, outside any transaction; answers its rows. */
export type ExecuteSql = (sql: string) => Promise<unknown>;

/** The first refresh: before it the tables are small enough for any plan. */
const FIRST_ANALYZE_AT = 16;

/**
 * Tables the day writes and none of its calls reads (the audit log, and the outbox the stopped relay would read):
 * their statistics steer no plan of the run, and they are most of what an ANALYZE of the whole database costs
 * (wide JSON columns: 250 of 400 ms for the audit log alone at the end of the 1.2 h day).
 */
const WRITE_ONLY_TABLES = ['audit_record', 'outbox'];

/** Every table of the schema but the write-only ones, as one ANALYZE statement's list (read once, at the first). */
const TABLES_TO_ANALYZE = `select string_agg(quote_ident(relname), ', ' order by relname) as tables from pg_class
  where relkind = 'r' and relnamespace = 'public'::regnamespace and relname not in (${WRITE_ONLY_TABLES.map((t) => `'${t}'`).join(', ')})`;

/**
 * Keeps the planner's statistics up with a day that grows from an empty site in minutes. The engine prepares its
 * hot statements once per connection, at their first use, and keeps their generic plans: made over empty tables at
 * the start of a simulated day, they read every address (a sequential scan) and every job of the site (through an
 * index on the site) for each dispatch, all day long, so a day's cost grew with the square of its jobs. An ANALYZE
 * refreshes the statistics and makes every cached plan of the tables it covers be planned again. Autovacuum does
 * that on a real site as its tables grow by 10%, but it looks at a database once a minute at most (and is off on
 * some machines), while a simulated day grows in minutes: so the simulator analyzes its database each time the jobs
 * it created double (16, 32, 64, ...). Plans decide how rows are found, never which: results are the same.
 *
 * @returns what to call after each job creation (waits for the ANALYZE when it runs one)
 */
export function analyzeAsJobsDouble(execute: ExecuteSql): () => Promise<void> {
  let created = 0;
  let next = FIRST_ANALYZE_AT;
  let statement: string | null = null;
  return async () => {
    created += 1;
    if (created < next) return;
    next *= 2;
    if (statement === null) {
      const [row] = (await execute(TABLES_TO_ANALYZE)) as { tables: string }[];
      statement = `analyze ${row!.tables}`;
    }
    await execute(statement);
  };
}
