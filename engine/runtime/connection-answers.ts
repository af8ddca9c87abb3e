/** A `pg` query's first argument, as far as the statement prefix reads it. */
export type QueryConfig = { text?: unknown; values?: unknown[] };
export type Callback = (error: Error | null, result: unknown) => void;

/** Per connection: what its current transaction queued (see statement-prefix.ts). The wrapper around `query` is installed once and stays. */
export type ConnectionState = { queued: string[]; owner: object | null; beginDeferred: boolean; exclusive: boolean; refused: boolean };

/** Marks the queries a statement prefix's `run` sends, which an exclusive owner lets through. */
export const OWN = Symbol('statement-prefix.own');

/** The error a query refused by an exclusive owner fails with (it was never sent). */
export class StatementRefused extends Error {
  constructor() {
    super('statement refused: this transaction accepts only its own statements');
  }
}

const BEGIN = /^\s*begin\s*;?\s*$/i;
const ROLLBACK = /^\s*rollback\s*;?\s*$/i;
const CONTROL = /^\s*(begin|commit|rollback)\s*;?\s*$/i;

export const isOwnOrControl = (config: QueryConfig | undefined): boolean =>
  typeof config === 'object' && config !== null && (OWN in config || (typeof config.text === 'string' && CONTROL.test(config.text)));

/** Fails a query without sending it (see `exclusive`), the way `pg` fails one: through its callback, or its promise. */
export function refuse(state: ConnectionState, callback: unknown): Promise<never> | undefined {
  state.refused = true;
  const error = new StatementRefused();
  if (typeof callback !== 'function') return Promise.reject(error);
  queueMicrotask(() => (callback as Callback)(error, undefined));
  return undefined;
}

/**
 * With the transaction's BEGIN deferred (see `deferBegin`), knex's own BEGIN is answered here and queued to go out
 * with the first real statement; a ROLLBACK before anything was sent ends a transaction the server never saw, so it
 * is answered here too and the queue dropped. Anything else: undefined (the caller sends it).
 */
export function answerLocally(state: ConnectionState, config: QueryConfig | undefined, callback: unknown): Promise<void> | undefined {
  const text = config && typeof config === 'object' && typeof config.text === 'string' ? config.text : undefined;
  if (text === undefined || typeof callback !== 'function') return undefined;
  const answer = (command: string) => {
    queueMicrotask(() => (callback as Callback)(null, { command, rows: [], rowCount: null, fields: [] }));
    return Promise.resolve();
  };
  if (BEGIN.test(text)) {
    if (state.queued[0] !== 'begin') state.queued.unshift('begin');
    return answer('BEGIN');
  }
  if (ROLLBACK.test(text)) {
    state.queued = [];
    state.beginDeferred = false;
    return answer('ROLLBACK');
  }
  return undefined;
}
