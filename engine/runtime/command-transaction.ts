import type { Transaction } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { asDriverException, executeDirectly, formatSql } from './direct-execute.ts';
import { attachStatementPrefixTo, type PgConnection } from './statement-prefix.ts';

/** The statement a command writes last (`?` placeholders, values), or null for none: its audit records and outbox rows. */
export type FinalStatement = { sql: string; params: unknown[] } | null;

type Pool = { acquireConnection(): Promise<PgConnection>; releaseConnection(connection: PgConnection): Promise<unknown> };

/**
 * One command's transaction (`engine.command`), bound to a site and acting user as `inTenantScope` binds it (the
 * ORM's site filter; `app.site_id`, `app.user_id` and no platform flag for row-level security), in fewer round
 * trips: the BEGIN and the tenant settings go out with the work's first statement (as group commit sends them, see
 * `inBatchTransaction`), and the final statement `work` hands back (written after everything the unit of work still
 * had pending) with the COMMIT. Raw SQL (`em.execute` with a string) goes straight to the connection, as in group
 * commit. The connection is taken from the pool here so that knex's BEGIN can be held back (`deferBegin`); the
 * EntityManager is a fork bound to knex's transaction, as group commit binds its managers.
 */
export async function inCommandTransaction<T>(
  orm: MikroORM,
  tenant: { siteId: string; userId: string | null },
  work: (em: EntityManager) => Promise<{ value: T; last: FinalStatement }>,
): Promise<T> {
  const knex = orm.em.getConnection().getKnex();
  const pool = knex.client as unknown as Pool;
  const connection = await pool.acquireConnection();
  const prefix = attachStatementPrefixTo(connection, { deferBegin: true });
  try {
    prefix.add(
      `select set_config('app.site_id', ${prefix.literal(tenant.siteId)}, true), set_config('app.user_id', ${prefix.literal(tenant.userId ?? '')}, true), set_config('app.platform', '', true)`,
    );
    return await knex.transaction(
      async (trx) => {
        const em = orm.em.fork({ clear: true });
        em.setTransactionContext(trx as unknown as Transaction);
        em.setFilterParams('site', { siteId: tenant.siteId });
        executeDirectly(em, prefix);
        const { value, last } = await work(em);
        // The unit of work first, so the final statement comes after every row it describes.
        await em.flush();
        if (last) prefix.add(formatSql(em, last.sql, last.params));
        return value;
      },
      { connection },
    );
  } catch (error) {
    // The COMMIT's own error comes back from `pg` unconverted: a deferred unique violation must still read as a race.
    throw asDriverException(orm.em, error);
  } finally {
    // After the COMMIT (or ROLLBACK) went out with whatever was queued.
    prefix.detach();
    // knex tags a connection with its transaction and untags only connections it took from the pool itself.
    Reflect.deleteProperty(connection, '__knexTxId');
    await pool.releaseConnection(connection);
  }
}
