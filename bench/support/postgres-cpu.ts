import { Client } from 'pg';
import { schedstatOf } from './schedstat.ts';

/**
 * CPU time of the PostgreSQL backends serving one database, the command path's connections and the outbox relay's
 * alike (from `/proc/<pid>/schedstat`, ns: the server runs on this machine). On a
 * shared machine, CPU time per operation moves much less with other load than wall time does, so it is the figure to
 * compare across runs. `micros()` is a counter that only grows: each backend adds what it used since the previous
 * sample (a backend that exits between two samples loses only its last interval; before, the whole of its time
 * dropped out of the sum, and a pool that closed an idle connection made the figure negative).
 */
export async function postgresCpu(url: string, database: string): Promise<{ micros(): Promise<number>; close(): Promise<void> }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  const seen = new Map<number, number>();
  let total = 0;
  return {
    async micros() {
      const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
      for (const { pid } of rows) {
        const { cpu } = schedstatOf(`/proc/${pid}/schedstat`);
        if (cpu === 0) continue;
        total += Math.max(0, cpu - (seen.get(pid) ?? 0));
        seen.set(pid, cpu);
      }
      return total / 1000;
    },
    close: () => client.end(),
  };
}
