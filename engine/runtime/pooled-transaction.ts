import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { tenantSettingsSql, type TenantScope } from '../../persistence/tenant-scope.ts';
import { transactorFor } from './connection-transactor.ts';
import { attachStatementPrefixTo, type PgConnection, type StatementPrefix } from './statement-prefix.ts';

type Pool = { acquireConnection(): Promise<PgConnection>; releaseConnection(connection: PgConnection): Promise<unknown> };

/**
 * One transaction bound to a tenant, on a connection taken from the pool here, its BEGIN and the tenant settings
 * sent with the work's first statement instead of in round trips of their own (`deferBegin`), its COMMIT with
 * whatever `work` queued on the prefix. The ORM's own queries and flushes stay inside, on this connection, through
 * the connection's knex transaction object (`transactorFor`: one per pooled connection, not one per transaction).
 * A failure rolls back (nothing is sent when nothing was: a deferred BEGIN is just dropped); a failed COMMIT has
 * ended the transaction already. `beforeRelease` runs once the transaction ended, with its error if it failed,
 * while the connection is still ours: the place for session-level work such as preparing statements. The shared
 * skeleton of `inCommandTransaction` (one command) and `inBatchTransaction` (group commit, the outbox relay).
 */
export async function inPooledTransaction<T>(
  orm: MikroORM,
  tenant: TenantScope,
  work: (trx: Knex.Transaction, prefix: StatementPrefix, connection: PgConnection) => Promise<T>,
  beforeRelease?: (connection: PgConnection, failure: unknown) => Promise<void>,
): Promise<T> {
  const client = orm.em.getConnection().getKnex().client;
  const pool = client as unknown as Pool;
  const connection = await pool.acquireConnection();
  const prefix = attachStatementPrefixTo(connection, { deferBegin: true });
  const held = transactorFor(connection, client);
  let failure: unknown;
  let committing = false;
  try {
    prefix.add('begin');
    prefix.add(tenantSettingsSql(tenant, (value) => prefix.literal(value)));
    const value = await work(held.transactor, prefix, connection);
    committing = true;
    await prefix.commit();
    return value;
  } catch (error) {
    failure = error;
    // A COMMIT that failed (or the statements sent with it) ended the transaction; anything else is rolled back
    // here, with the work's error kept as the one the caller sees, and without the writes still queued for the
    // COMMIT (sent with the ROLLBACK, they would only run in vain).
    if (!committing) {
      prefix.discard();
      await prefix.run('rollback').catch(() => undefined);
    }
    throw error;
  } finally {
    held.end();
    prefix.detach();
    if (beforeRelease) await beforeRelease(connection, failure).catch(() => undefined);
    await pool.releaseConnection(connection);
  }
}
