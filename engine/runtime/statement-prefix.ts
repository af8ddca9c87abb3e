import { answerLocally, isOwnOrControl, OWN, refuse, type Callback, type ConnectionState, type QueryConfig } from './connection-answers.ts';
import { mergeBareSelects } from './bare-selects.ts';
import { TransactionEnded } from './connection-transactor.ts';

/** The bits of a `pg` Client this file uses. */
export type PgConnection = {
  query: (...args: unknown[]) => unknown;
  escapeLiteral(value: string): string;
};

/**
 * Lets a transaction send short statements (a SAVEPOINT, a `set_config`, the batch's audit and outbox INSERT) in the
 * same round trip as the statement that follows them, instead of one round trip each: on a loaded machine each round
 * trip costs a socket write, a wake-up of the PostgreSQL backend and a turn of the event loop, which is most of a
 * command's cost.
 *
 * MikroORM sends every statement as text with its values inlined (no bind parameters), so the next statement can
 * carry the prefix as one multi-statement simple query; its result is the last statement's. A statement with bind
 * parameters gets the prefix queued as its own query just before it (the driver keeps the order). Statements queued
 * last go out with the transaction's COMMIT; if one of them fails, the COMMIT in the same query never runs, so a
 * ROLLBACK follows at once and the connection goes back to the pool out of any transaction.
 */
export type StatementPrefix = {
  /** Queues one statement (no `;` of its own) to go out with the next statement. */
  add(statement: string): void;
  /** Statements queued and not sent yet. */
  readonly pending: number;
  /** True once every queued statement has been sent. */
  readonly flushed: boolean;
  /** Drops the statements not sent yet, but the first `keep` of them. */
  discard(keep?: number): void;
  /** Quotes a string as an SQL literal. */
  literal(value: string): string;
  /** Sends one statement (text only, values inlined) on the transaction's connection, with the queued prefix. */
  run(text: string): Promise<unknown>;
  /**
   * Queues a read (text only, values inlined) to go out with the COMMIT, after everything else queued and inside the
   * transaction, so it sees every write: a command's answer costs no round trip of its own. Its rows are set on
   * `into` once `commit` resolved (one read per transaction; a second replaces the first).
   */
  readWithCommit(text: string, into: { rows?: Record<string, unknown>[] }): void;
  /** Sends the COMMIT with the queued prefix and the read (`readWithCommit`); a failed read rolls the transaction back. */
  commit(): Promise<void>;
  /**
   * From now on, only `run` and the transaction's own BEGIN, COMMIT and ROLLBACK reach the connection: any other
   * query (the ORM's, knex's) fails at once, without being sent, and `refused` turns true. For work that must see
   * every statement it sends (pipelined group commit), where a statement sent behind its back could run under the
   * wrong user's settings.
   */
  exclusive(): void;
  /** True once a query was refused (see `exclusive`). */
  readonly refused: boolean;
  /** Stops queuing on this connection; anything still queued is dropped. */
  detach(): void;
};

const states = new WeakMap<PgConnection, ConnectionState>();

/**
 * Wraps the connection's `query` for good, rather than per transaction: a connection goes back to the pool when its
 * transaction ends, possibly before the owner restores anything, and the next owner's wrapper must not be undone by
 * the previous one's. With nothing queued, the wrapper passes the call straight through.
 */
function stateOf(connection: PgConnection): ConnectionState {
  let state = states.get(connection);
  if (state) return state;
  const current: ConnectionState = { queued: [], owner: null, beginDeferred: false, exclusive: false, refused: false };
  state = current;
  states.set(connection, current);
  // Looked up at each call, not kept: a wrapper installed on the prototype later (the bench's statement counter) still sees every query.
  const ownQuery = Object.hasOwn(connection, 'query') ? connection.query : undefined;
  const query = () => ownQuery ?? (Object.getPrototypeOf(connection) as PgConnection).query;
  const original = {
    apply: (self: PgConnection, args: unknown[]) => query().apply(self, args),
    call: (self: PgConnection, ...args: unknown[]) => query().apply(self, args),
  };
  connection.query = function (this: PgConnection, ...args: unknown[]) {
    const [config, callback] = args as [QueryConfig | undefined, unknown];
    if (current.beginDeferred) {
      const answered = answerLocally(current, config, callback);
      if (answered) return answered;
    }
    if (current.exclusive && !isOwnOrControl(config)) return refuse(current, callback);
    if (current.queued.length === 0) return original.apply(this, args);
    const prefix = mergeBareSelects(current.queued);
    current.queued = [];
    current.beginDeferred = false;
    const inline = config && typeof config === 'object' && typeof config.text === 'string' && !config.values?.length && typeof callback === 'function';
    if (!inline) {
      // The prefix goes first on its own; if it failed, the transaction is aborted and the next statement says so.
      void (original.call(this, prefix.join('; ')) as Promise<unknown>).catch(() => undefined);
      return original.apply(this, args);
    }
    const text = config.text as string;
    const skip = prefix.length;
    // One join, so the text goes out as one flat string: `pg` measures it before writing, and a concatenation of
    // the joined prefix and the statement would be copied whole once more there (kilobytes of JSON per command).
    prefix.push(text);
    return original.call(this, { ...config, text: prefix.join('; ') }, (error: Error | null, result: unknown) => {
      // A failed prefix skips the COMMIT or ROLLBACK it travelled with: end the transaction before the connection
      // is reused (a second ROLLBACK only warns).
      if (error && /^\s*(commit|rollback)\b/i.test(text)) void (original.call(this, 'rollback') as Promise<unknown>).catch(() => undefined);
      const own = Array.isArray(result) ? result.slice(skip) : result;
      (callback as Callback)(error, Array.isArray(own) && own.length === 1 ? own[0] : own);
    });
  };
  return current;
}

/**
 * Queues statements to go out with the next query on `connection` (merged as `mergeBareSelects` merges), when a
 * transaction owns it through a statement prefix and sends more than its own statements; false otherwise (the
 * caller sends them itself). For code that holds the connection rather than the prefix (the dispatch's prepared
 * statements), so what it queues reaches the same session in order with what it sends.
 */
export function queueOnConnection(connection: object, statements: string[]): boolean {
  const state = states.get(connection as PgConnection);
  if (!state || state.owner === null || state.exclusive) return false;
  state.queued.push(...statements);
  return true;
}

/**
 * A statement prefix on a connection taken from the pool by the caller, before any transaction. With `deferBegin`,
 * the transaction about to start on it (knex's BEGIN) sends its BEGIN with its first statement instead of in a
 * round trip of its own.
 */
export function attachStatementPrefixTo(connection: PgConnection, options: { deferBegin?: boolean } = {}): StatementPrefix {
  const state = stateOf(connection);
  // Only the current owner touches the queue: a late `detach` after the connection changed hands does nothing.
  const owner = {};
  state.owner = owner;
  state.queued = [];
  state.beginDeferred = options.deferBegin === true;
  state.exclusive = false;
  state.refused = false;
  const mine = () => state.owner === owner;
  let read: { text: string; into: { rows?: Record<string, unknown>[] } } | null = null;
  const run = (text: string) =>
    new Promise<unknown>((resolve, reject) => {
      // A stale caller (an EntityManager kept past its transaction) must not reach the next owner's session.
      if (!mine()) return reject(new TransactionEnded());
      connection.query({ text, [OWN]: true }, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result)));
    });
  return {
    add: (statement) => {
      if (mine()) state.queued.push(statement);
    },
    get pending() {
      return mine() ? state.queued.length : 0;
    },
    get flushed() {
      return !mine() || state.queued.length === 0;
    },
    discard: (keep = 0) => {
      if (!mine()) return;
      state.queued = state.queued.slice(0, keep);
      read = null;
    },
    literal: (value) => connection.escapeLiteral(value),
    run,
    readWithCommit: (text, into) => {
      if (mine()) read = { text, into };
    },
    async commit() {
      const final = read;
      read = null;
      if (!final) {
        await run('commit');
        return;
      }
      let results: unknown;
      try {
        results = await run(`${final.text}; commit`);
      } catch (error) {
        // The read (or a statement before it) failed, so the COMMIT after it never ran: end the transaction here.
        await run('rollback').catch(() => undefined);
        throw error;
      }
      final.into.rows = (results as { rows: Record<string, unknown>[] }[])[0]!.rows;
    },
    exclusive: () => {
      if (mine()) state.exclusive = true;
    },
    get refused() {
      return mine() && state.refused;
    },
    detach() {
      if (!mine()) return;
      read = null;
      state.owner = null;
      state.queued = [];
      state.beginDeferred = false;
      state.exclusive = false;
      state.refused = false;
    },
  };
}
