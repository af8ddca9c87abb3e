import type { MikroORM } from '@mikro-orm/postgresql';
import { PreparedStatements } from './prepared-statements.ts';
import { attachStatementPrefixTo, type PgConnection, type StatementPrefix } from './statement-prefix.ts';
import { isStalePlanError } from './statement-rounds.ts';
import { UserManagers } from './user-managers.ts';

type Pool = { acquireConnection(): Promise<PgConnection>; releaseConnection(connection: PgConnection): Promise<unknown> };

/** The tenant a batch transaction is bound to: one site, or (the outbox relay) the platform, which sees every site. */
export type BatchTenant = { siteId: string; platform?: false } | { siteId: null; platform: true };

/**
 * One transaction bound to the tenant, as `inTenantScope` binds one (the ORM's site filter, and `app.site_id` /
 * `app.platform` for row-level security, with no user), on a connection taken from the pool here: knex's
 * transaction runs on it (so the ORM's own queries and flushes stay inside), but its BEGIN and the tenant settings
 * travel with the first statement instead of in round trips of their own, and no MikroORM transaction (fork,
 * flush, events) wraps the batch. After it ended, and before the connection goes back to the pool, the statements
 * the batch sent for the first time on this session are prepared for the next batches.
 */
export async function inBatchTransaction(
  orm: MikroORM,
  tenant: BatchTenant,
  work: (managers: UserManagers, prefix: StatementPrefix, prepared: PreparedStatements) => Promise<void>,
): Promise<void> {
  const knex = orm.em.getConnection().getKnex();
  const pool = knex.client as unknown as Pool;
  const connection = await pool.acquireConnection();
  const prefix = attachStatementPrefixTo(connection, { deferBegin: true });
  const prepared = PreparedStatements.of(connection);
  try {
    const platform = tenant.platform === true ? 'on' : '';
    prefix.add(
      `select set_config('app.site_id', ${prefix.literal(tenant.siteId ?? '')}, true), set_config('app.user_id', '', true), set_config('app.platform', '${platform}', true)`,
    );
    await knex.transaction((trx) => work(new UserManagers(orm, trx, tenant.siteId, prefix), prefix, prepared), { connection });
  } catch (error) {
    // The batch statement sent with the COMMIT may be a prepared one whose plan a schema change outdated: the
    // session's statements are deallocated below, and prepared again as they are next sent.
    if (isStalePlanError(error)) prepared.forgetAll();
    throw error;
  } finally {
    prefix.detach();
    // knex tags a connection with its transaction and untags only connections it took from the pool itself.
    Reflect.deleteProperty(connection, '__knexTxId');
    // Out of the transaction: statements first sent in this batch are prepared for the next ones on this session.
    await prepared.sync(connection).catch(() => undefined);
    await pool.releaseConnection(connection);
  }
}
