import { createRequire } from 'node:module';
import type { Knex } from '@mikro-orm/postgresql';
import type { PgConnection } from './statement-prefix.ts';

/** knex's own constructor of a knex object over a client (what `knex.transaction` builds for each transaction). */
const makeKnex = createRequire(import.meta.url)('knex/lib/knex-builder/make-knex') as (client: unknown) => Knex.Transaction;

type KnexClient = {
  constructor: { prototype: object };
  version?: unknown;
  config?: unknown;
  driver?: unknown;
  connectionSettings?: unknown;
  valueForUndefined?: unknown;
  logger?: unknown;
  emit(event: string, ...args: unknown[]): boolean;
};
type TransactingClient = KnexClient & {
  transacting: true;
  query(connection: unknown, obj: unknown): Promise<unknown>;
  acquireConnection(): Promise<unknown>;
  releaseConnection(): Promise<void>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
};

/** One connection's knex transaction object, and the client it runs queries with. */
type Held = { transactor: Knex.Transaction; client: TransactingClient };

const byConnection = new WeakMap<PgConnection, Held>();

/** The error knex gives a query on a transaction that has ended. */
export class TransactionEnded extends Error {
  constructor() {
    super('Transaction query already complete: this transaction has ended');
  }
}

/**
 * What the ORM is bound to for one transaction on `connection` whose BEGIN, COMMIT and ROLLBACK the caller sends
 * itself (`inPooledTransaction`): a knex transaction object (queries go to this connection, a nested
 * `em.transactional` takes a savepoint, as in a knex transaction). The knex object is built once per pooled
 * connection, not once per transaction as `knex.transaction` builds it (its ~100 method properties were the
 * largest allocation of a dispatch); each transaction gets a view of it with a client of its own, which refuses
 * queries once `end` was called, as a finished knex transaction does, even while the connection serves another.
 */
export function transactorFor(connection: PgConnection, client: unknown): { transactor: Knex.Transaction; end(): void } {
  let held = byConnection.get(connection);
  if (!held) {
    const own = transactingClient(client as KnexClient, connection);
    held = { transactor: makeKnex(own), client: own };
    Object.assign(held.transactor, { isTransaction: true, userParams: {} });
    byConnection.set(connection, held);
  }
  const shared = held.client;
  let open = true;
  const leased = Object.create(shared) as TransactingClient;
  leased.query = (conn, obj) => (open ? shared.query(conn, obj) : Promise.reject(new TransactionEnded()));
  // What reaches the connection without a query (a dispatch statement prepared on the session) asks for it here.
  leased.acquireConnection = () => (open ? shared.acquireConnection() : Promise.reject(new TransactionEnded()));
  const transactor = Object.create(held.transactor) as Knex.Transaction;
  // What knex's nested transactions read of their outer one: whether it ended (then they refuse queries, as the
  // leased client does), and the last sibling's promise (savepoints of one transaction run one after the other).
  const outer = { _lastChild: Promise.resolve() as Promise<unknown>, isCompleted: () => !open, transactor };
  // A context of this transaction's own: `raw`, `queryBuilder` and nested transactions use the leased client.
  const context = Object.create((held.transactor as unknown as { context: object }).context, {
    client: { value: leased, writable: true },
    transaction: {
      value(this: { _transaction(container: unknown, config: object, outerTx: unknown): unknown }, container: unknown, options?: object) {
        // knex's own entry for a transaction with an outer one (what its transactors' `transaction` calls).
        // oxlint-disable-next-line no-underscore-dangle
        return this._transaction(container, { doNotRejectOnRollback: true, userParams: {}, ...options }, outer);
      },
    },
  });
  Object.defineProperty(transactor, 'context', { value: context });
  Object.defineProperty(transactor, 'isCompleted', { value: () => !open });
  // Own and enumerable: knex takes an object without own enumerable keys for an empty (invalid) transaction.
  Object.defineProperty(transactor, 'client', { value: leased, enumerable: true });
  return {
    transactor,
    end: () => {
      open = false;
    },
  };
}

/**
 * A knex client that runs everything on `connection` and never gives it back to the pool (what knex's
 * `makeTxClient` builds per transaction), its events passed on to the pool's client as there.
 */
function transactingClient(client: KnexClient, connection: PgConnection): TransactingClient {
  const own = Object.create(client.constructor.prototype) as TransactingClient;
  Object.assign(own, {
    version: client.version,
    config: client.config,
    driver: client.driver,
    connectionSettings: client.connectionSettings,
    valueForUndefined: client.valueForUndefined,
    logger: client.logger,
    transacting: true,
  });
  for (const event of ['start', 'query', 'query-error', 'query-response']) own.on(event, (...args) => client.emit(event, ...args));
  const query = own.query;
  own.query = (conn, obj) => {
    if (conn !== connection) return Promise.reject(new Error('Invalid connection for transaction query.'));
    return query.call(own, conn, obj);
  };
  own.acquireConnection = () => Promise.resolve(connection);
  own.releaseConnection = () => Promise.resolve();
  return own;
}
