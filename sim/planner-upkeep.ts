/** Runs one SQL statement on the run's database, outside any transaction. */
export type ExecuteSql = (sql: string) => Promise<unknown>;

/** The first refresh: before it the tables are small enough for any plan. */
const FIRST_ANALYZE_AT = 16;

export type PlannerUpkeep = {
  /** Call after each job creation: starts an ANALYZE when the jobs created have doubled, and returns at once. */
  afterJobCreated(): Promise<void>;
  /** Waits for the ANALYZE running, if any; rethrows its failure. */
  settle(): Promise<void>;
};

/**
 * Keeps the planner's statistics up with a day that grows from an empty site in minutes. The engine prepares its
 * hot statements once per connection, at their first use, and keeps their generic plans: made over empty tables at
 * the start of a simulated day, they read every address (a sequential scan) and every job of the site (through an
 * index on the site) for each dispatch, all day long, so a day's cost grew with the square of its jobs. An ANALYZE
 * refreshes the statistics and makes every cached plan of the tables it covers be planned again. Autovacuum does
 * that on a real site as its tables grow by 10%, but it looks at a database once a minute at most (and is off on
 * some machines), while a simulated day grows in minutes: so the simulator analyzes its database each time the jobs
 * it created double (16, 32, 64, ...).
 *
 * Plans decide how rows are found, never which: results are the same whenever the ANALYZE lands. So it runs beside
 * the day, as autovacuum would, instead of in the office's chain: there every dispatch waited for it (0.2 s at 16
 * jobs, 0.65 s at 1,024, longer as the tables grow), and with it the whole loop. One runs at a time; a doubling
 * reached while one runs starts the next when it ends. `execute` should have a connection of its own, so the
 * engine's pool keeps all of its connections for the day's calls.
 */
export function analyzeAsJobsDouble(execute: ExecuteSql): PlannerUpkeep {
  let created = 0;
  let next = FIRST_ANALYZE_AT;
  let owed = false;
  let running: Promise<void> | null = null;
  let failure: unknown = null;
  const start = (): void => {
    owed = false;
    running = execute('analyze').then(
      () => undefined,
      (error: unknown) => void (failure ??= error),
    );
    void running.then(() => {
      running = null;
      if (owed && failure === null) start();
    });
  };
  return {
    async afterJobCreated() {
      created += 1;
      if (created < next) return;
      next *= 2;
      if (running) owed = true;
      else start();
    },
    async settle() {
      while (running) await running;
      if (failure !== null) throw failure;
    },
  };
}
