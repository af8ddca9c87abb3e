import { Client } from 'pg';

/** How often `pg_stat_activity` is read: often enough for batches of a few milliseconds, cheap enough to leave the run as it was. */
const INTERVAL_MS = 5;

/** One kind of backend moment and its share: how many of the database's backends were in it, on average. */
export type WaitShare = { backends: number; what: string };

/**
 * Samples what the backends serving one database are doing (`pg_stat_activity`: state, wait event, the statement in
 * hand) until `stop`: where a workload's PostgreSQL side waits rather than works, e.g. a COMMIT waiting for the WAL
 * flush, or a transaction waiting for Node's next statement. A diagnostic (`BENCH_WAIT_EVENTS=1`): one query per
 * 5 ms on its own connection, run from the bench's process.
 */
export async function startWaitEvents(url: string, database: string): Promise<{ stop(): Promise<WaitShare[]> }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  const counts = new Map<string, number>();
  let samples = 0;
  const stopped = new AbortController();
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const { rows } = await client.query<{ state: string; wait: string | null; head: string; relay: boolean }>(
        `select state, wait_event_type || ':' || wait_event as wait, left(query, 40) as head,
                strpos(query, 'pg_advisory_xact_lock') > 0 as relay from pg_stat_activity
          where datname = $1 and pid <> pg_backend_pid() and backend_type = 'client backend' and state <> 'idle'`,
        [database],
      );
      samples += 1;
      for (const row of rows) {
        const what = `${moment(row.state, row.wait)} · ${row.relay ? 'relay pass' : statementKind(row.head)}`;
        counts.set(what, (counts.get(what) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
    }
  })();
  return {
    async stop() {
      stopped.abort();
      await loop;
      await client.end();
      return [...counts].map(([what, n]) => ({ backends: n / Math.max(1, samples), what })).sort((a, b) => b.backends - a.backends);
    },
  };
}

/** The backend's moment in words: working, waiting for the WAL to reach the disk, waiting for the client, or the raw wait event. */
function moment(state: string, wait: string | null): string {
  if (state === 'idle in transaction' && wait === 'Client:ClientRead') return 'in a transaction, waiting for Node';
  if (state !== 'active') return `${state} ${wait ?? ''}`.trim();
  if (wait === null) return 'working (or waiting for a core)';
  if (wait === 'IO:WALSync' || wait === 'IO:WALWrite' || wait === 'LWLock:WALWrite') return `waiting for the WAL flush (${wait})`;
  return `waiting: ${wait}`;
}

/**
 * Which statement the backend has in hand (its last one, when it waits for the client). A batch's later round is
 * named by its first statement only: `pg_stat_activity` keeps the first 1 KB of a query's text, so its COMMIT at the
 * end does not show.
 */
function statementKind(head: string): string {
  const text = head.trim().toLowerCase();
  if (text === 'commit') return 'a COMMIT alone (the relay sends its own)';
  if (text.startsWith('begin')) return 'first round (BEGIN …)';
  if (text.startsWith('execute')) return 'a later round (execute …; the last one ends in COMMIT)';
  return text.split(/[\s(]/)[0] ?? text;
}
