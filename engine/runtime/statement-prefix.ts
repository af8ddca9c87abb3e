import type { EntityManager } from '@mikro-orm/postgresql';

/** The bits of a `pg` Client this file uses. */
type PgConnection = {
  query: (...args: unknown[]) => unknown;
  escapeLiteral(value: string): string;
};
type QueryConfig = { text?: unknown; values?: unknown[] };
type Callback = (error: Error | null, result: unknown) => void;

/**
 * Lets a transaction send short control statements (a SAVEPOINT, a `set_config`) in the same round trip as the
 * statement that follows them, instead of one round trip each: on a loaded machine each round trip costs a socket
 * write, a wake-up of the PostgreSQL backend and a turn of the event loop, which is most of a command's cost.
 *
 * MikroORM sends every statement as text with its values inlined (no bind parameters), so the next statement can
 * carry the prefix as one multi-statement simple query; its result is the last statement's. A statement with bind
 * parameters gets the prefix queued as its own query just before it (the driver keeps the order). Only the
 * transaction's own connection is touched, until `detach()`.
 */
export type StatementPrefix = {
  /** Queues one statement (no `;` of its own) to go out with the next statement. */
  add(statement: string): void;
  /** True once every queued statement has been sent. */
  readonly flushed: boolean;
  /** Drops the statements not sent yet. */
  discard(): void;
  /** Quotes a string as an SQL literal. */
  literal(value: string): string;
  /** Sends one statement (text only, values inlined) on the transaction's connection, with the queued prefix. */
  run(text: string): Promise<unknown>;
  /** Restores the connection; anything still queued is dropped. */
  detach(): void;
};

/** The `pg` connection under a MikroORM transaction (knex's transaction client hands back its one connection). */
async function connectionOf(tx: EntityManager): Promise<PgConnection> {
  const context = tx.getTransactionContext<{ client: { acquireConnection(): Promise<PgConnection> } }>();
  if (!context) throw new Error('statement prefixes need a transaction');
  return context.client.acquireConnection();
}

export async function attachStatementPrefix(tx: EntityManager): Promise<StatementPrefix> {
  const connection = await connectionOf(tx);
  const original = connection.query;
  const ownBefore = Object.hasOwn(connection, 'query');
  let queued: string[] = [];

  connection.query = function (this: PgConnection, ...args: unknown[]) {
    if (queued.length === 0) return original.apply(this, args);
    const prefix = queued;
    queued = [];
    const [config, callback] = args as [QueryConfig | undefined, unknown];
    const inline = config && typeof config === 'object' && typeof config.text === 'string' && !config.values?.length && typeof callback === 'function';
    if (!inline) {
      // The prefix goes first on its own; if it failed, the transaction is aborted and the next statement says so.
      void (original.call(this, prefix.join('; ')) as Promise<unknown>).catch(() => undefined);
      return original.apply(this, args);
    }
    const skip = prefix.length;
    return original.call(this, { ...config, text: `${prefix.join('; ')}; ${config.text as string}` }, (error: Error | null, result: unknown) => {
      const own = Array.isArray(result) ? result.slice(skip) : result;
      (callback as Callback)(error, Array.isArray(own) && own.length === 1 ? own[0] : own);
    });
  };

  return {
    add: (statement) => void queued.push(statement),
    get flushed() {
      return queued.length === 0;
    },
    discard: () => void (queued = []),
    literal: (value) => connection.escapeLiteral(value),
    run: (text) =>
      new Promise((resolve, reject) => {
        connection.query({ text }, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result)));
      }),
    detach() {
      queued = [];
      if (ownBefore) connection.query = original;
      else delete (connection as Partial<PgConnection>).query;
    },
  };
}
