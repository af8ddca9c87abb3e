import { Client } from 'pg';

/**
 * The state `pg_stat_activity` shows for a backend (`idle`, `idle in transaction`, ...), read on a connection of its
 * own: whether a session went back to the pool out of any transaction.
 */
export async function sessionState(databaseUrl: string, backendPid: number): Promise<string | undefined> {
  const observer = new Client({ connectionString: databaseUrl });
  await observer.connect();
  try {
    const { rows } = await observer.query<{ state: string }>('select state from pg_stat_activity where pid = $1', [backendPid]);
    return rows[0]?.state;
  } finally {
    await observer.end();
  }
}
