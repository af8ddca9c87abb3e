import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { tenantSettingsSql, type TenantScope } from '../../persistence/tenant-scope.ts';
import { attachStatementPrefixTo, type PgConnection, type StatementPrefix } from './statement-prefix.ts';

type Pool = { acquireConnection(): Promise<PgConnection>; releaseConnection(connection: PgConnection): Promise<unknown> };

/**
 * One knex transaction bound to a tenant, on a connection taken from the pool here so that its BEGIN and the
 * tenant settings travel with the work's first statement instead of in round trips of their own (`deferBegin`).
 * The ORM's own queries and flushes stay inside, on this connection; whatever `work` queues on the prefix goes out
 * with the COMMIT. `beforeRelease` runs once the transaction ended, with its error if it failed, while the
 * connection is still ours: the place for session-level work such as preparing statements. The shared skeleton of
 * `inCommandTransaction` (one command) and `inBatchTransaction` (group commit, the outbox relay).
 */
export async function inPooledTransaction<T>(
  orm: MikroORM,
  tenant: TenantScope,
  work: (trx: Knex.Transaction, prefix: StatementPrefix, connection: PgConnection) => Promise<T>,
  beforeRelease?: (connection: PgConnection, failure: unknown) => Promise<void>,
): Promise<T> {
  const knex = orm.em.getConnection().getKnex();
  const pool = knex.client as unknown as Pool;
  const connection = await pool.acquireConnection();
  const prefix = attachStatementPrefixTo(connection, { deferBegin: true });
  let failure: unknown;
  try {
    prefix.add(tenantSettingsSql(tenant, (value) => prefix.literal(value)));
    return await knex.transaction((trx) => work(trx, prefix, connection), { connection });
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    // After the COMMIT (or ROLLBACK) went out with whatever was queued.
    prefix.detach();
    // knex tags a connection with its transaction and untags only connections it took from the pool itself.
    Reflect.deleteProperty(connection, '__knexTxId');
    if (beforeRelease) await beforeRelease(connection, failure).catch(() => undefined);
    await pool.releaseConnection(connection);
  }
}
