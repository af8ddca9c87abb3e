import { readFileSync } from 'node:fs';
import { Client } from 'pg';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time of the PostgreSQL backends serving one database (read from /proc: the server runs on this machine). On a
 * shared machine, CPU time per operation moves much less with other load than wall time does, so it is the figure to
 * compare across runs. Backends that exit between two samples are not counted; the bench's pooled ones live on.
 */
export async function postgresCpu(url: string, database: string): Promise<{ micros(): Promise<number>; close(): Promise<void> }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return {
    async micros() {
      const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
      let ticks = 0;
      for (const { pid } of rows) {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          ticks += Number(fields[11]) + Number(fields[12]);
        } catch {
          // The backend exited meanwhile.
        }
      }
      return (ticks / TICKS_PER_SECOND) * 1e6;
    },
    close: () => client.end(),
  };
}
