import { readFileSync } from 'node:fs';
import { Client } from 'pg';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time of the PostgreSQL backends serving one database (read from /proc: the server runs on this machine). On a
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
        const ticks = ticksOf(pid);
        if (ticks === null) continue;
        total += Math.max(0, ticks - (seen.get(pid) ?? 0));
        seen.set(pid, ticks);
      }
      return (total / TICKS_PER_SECOND) * 1e6;
    },
    close: () => client.end(),
  };
}

/** User + system clock ticks of a process so far, or null once it has exited. */
function ticksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}
