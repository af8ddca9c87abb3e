import { Client } from 'pg';
import { inParallel } from './command-load.ts';

/** Which transaction a statement ran in: a command's, the outbox relay's (it takes the relay's advisory lock), or none. */
export type Owner = 'command' | 'relay' | 'none';

export type QueryCount = {
  operations: number;
  /** Operations in flight while counting (1: one at a time). */
  concurrency: number;
  /** Statements (each one a round trip to PostgreSQL) per operation, in total and by owner. */
  perOperation: Record<Owner | 'total', number>;
  statements: { owner: Owner; statement: string; perOperation: number; bytes: number }[];
};

/**
 * `insert into "outbox" ("id", ...` → `insert into "outbox"`: the statement's verb and table, without its columns. A
 * multi-statement query (control statements sent with the next one, in one round trip) shows each part, joined by `+`.
 */
function shape(text: string): string {
  const parts = text.split(/;\s+(?=savepoint |select set_config|update |insert |delete |select |with |execute |commit|rollback)/i);
  if (parts.length === 1) return shapeOne(text);
  // A pipelined round carries one statement per unit: `execute engine_stmt_2 ×16`.
  const runs: { shape: string; count: number }[] = [];
  for (const part of parts.map(shapeOne)) {
    const last = runs.at(-1);
    if (last?.shape === part) last.count += 1;
    else runs.push({ shape: part, count: 1 });
  }
  return runs.map((r) => (r.count > 1 ? `${r.shape} ×${r.count}` : r.shape)).join(' + ');
}

function shapeOne(text: string): string {
  const sql = text.replace(/\s+/g, ' ').trim();
  const head = /^(select set_config|select pg_advisory_xact_lock|begin|commit|rollback|savepoint|release savepoint|execute [a-z_0-9]+|insert into \S+|update \S+|delete from \S+|select .*? from \S+)/i.exec(sql);
  return (head?.[1] ?? sql.slice(0, 60)).toLowerCase();
}

/** A round trip's text as sent: its shape, and its size in bytes (what the socket write copies). */
type Sent = { statement: string; bytes: number };

/**
 * Counts the SQL statements sent while `operations` run (one at a time unless `concurrency` says otherwise), by wrapping the `pg` Client's `query` for
 * that window only: MikroORM (through knex) and every pool share the one `pg` module, so nothing in the engine
 * changes. Statements are grouped per connection into transactions (BEGIN … COMMIT), so the relay's passes (kicked
 * after each commit, on their own connection) are told apart from the commands'. A diagnostic, never run while
 * measuring.
 */
export async function countQueries(count: number, operation: (i: number) => Promise<void>, concurrency = 1): Promise<QueryCount> {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const open = new WeakMap<object, Sent[]>();
  const seen = new Map<string, { count: number; bytes: number }>();
  const relays = new WeakSet<Sent[]>();
  const tally = (owner: Owner, statements: Sent[]) => {
    for (const { statement, bytes } of statements) {
      const entry = seen.get(`${owner}\t${statement}`) ?? { count: 0, bytes: 0 };
      entry.count += 1;
      entry.bytes += bytes;
      seen.set(`${owner}\t${statement}`, entry);
    }
  };
  prototype.query = function (this: object, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
    const statement = shape(text);
    // A BEGIN may travel with the statements after it (group commit): `begin + ...`.
    const begins = statement === 'begin' || statement.startsWith('begin + ');
    const transaction = begins ? [] : open.get(this);
    if (begins) open.set(this, transaction!);
    const sent = { statement, bytes: Buffer.byteLength(text) };
    if (!transaction) tally('none', [sent]);
    else transaction.push(sent);
    // The relay's transaction takes its own advisory lock; commands take others (a driver's day in dispatch).
    if (transaction && text.includes('outbox-relay')) relays.add(transaction);
    // A COMMIT may carry statements queued before it (the group commit's audit and outbox INSERT): `... + commit`.
    if (transaction && /(^| \+ )(commit|rollback)$/.test(statement)) {
      open.delete(this);
      tally(relays.has(transaction) ? 'relay' : 'command', transaction);
    }
    return original.apply(this, args);
  };
  try {
    await inParallel(count, concurrency, operation);
    // The relay pass kicked by the last commit runs on the next macrotask: let it finish inside the window.
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    prototype.query = original;
  }
  const statements = [...seen]
    .map(([key, { count: n, bytes }]) => {
      const [owner, statement] = key.split('\t') as [Owner, string];
      return { owner, statement, perOperation: n / count, bytes: Math.round(bytes / n) };
    })
    .sort((a, b) => a.owner.localeCompare(b.owner) || b.perOperation - a.perOperation);
  const sum = (owner?: Owner) => statements.filter((s) => !owner || s.owner === owner).reduce((total, s) => total + s.perOperation, 0);
  return { operations: count, concurrency, perOperation: { total: sum(), command: sum('command'), relay: sum('relay'), none: sum('none') }, statements };
}
