import { OptimisticLockError, type Transaction } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { asDriverException, executeDirectly, platformOf } from './direct-execute.ts';
import { allowDeferredWrites, prefixSink } from './deferred-writes.ts';
import { inPooledTransaction } from './pooled-transaction.ts';
import { PreparedStatements, prepareAfterTransaction } from './prepared-statements.ts';
import { isStalePlanError } from './statement-rounds.ts';

/** The statement a command writes last (`?` placeholders, values), or null for none: its audit records and outbox rows. */
export type FinalStatement = { sql: string; params: unknown[] } | null;

/** A read sent with the COMMIT (`?` placeholders, values); its rows are set once the transaction committed. */
export type CommitRead = { sql: string; params: unknown[]; rows?: Record<string, unknown>[] };

/**
 * The SQLSTATE a statement queued with the next one (`deferStatements`) raises when the plan it was made from no longer
 * holds (migration 0023, `dispatch_plan_holds`): its transaction rolls back, and the command fails with
 * {@link StalePlanError}, which the engine retries like any version race.
 */
export const PLAN_NO_LONGER_HOLDS = 'DP001';

/** A queued statement's plan no longer held: nothing was written (the engine runs the command again, on reads). */
export class StalePlanError extends OptimisticLockError {}

const isStalePlan = (error: unknown) => (error as { code?: unknown } | null)?.code === PLAN_NO_LONGER_HOLDS;

/**
 * One command's transaction (`engine.command`), bound to a site and acting user as `inTenantScope` binds it (the
 * ORM's site filter; `app.site_id`, `app.user_id` and no platform flag for row-level security), in fewer round
 * trips: the BEGIN and the tenant settings go out with the work's first statement (`inPooledTransaction`, as group
 * commit sends them), and the final statement `work` hands back (written after everything the unit of work still
 * had pending) with the COMMIT, then the read it hands back (`read`, its rows set on it once committed). Raw SQL
 * (`em.execute` with a string) goes straight to the connection, as in group commit, and runs prepared once the
 * session has sent it before (`PreparedStatements`, as group commit does), so PostgreSQL parses and plans each
 * statement once per session, not once per command. The EntityManager is a fork bound to knex's transaction, as
 * group commit binds its managers.
 */
export async function inCommandTransaction<T>(
  orm: MikroORM,
  tenant: { siteId: string; userId: string | null },
  work: (em: EntityManager) => Promise<{ value: T; last: FinalStatement; read?: CommitRead | null }>,
): Promise<T> {
  let sentPrepared = false;
  try {
    return await inPooledTransaction(
      orm,
      tenant,
      async (trx, prefix, connection) => {
        const em = orm.em.fork({ clear: true });
        em.setTransactionContext(trx as unknown as Transaction);
        em.setFilterParams('site', { siteId: tenant.siteId });
        const prepared = PreparedStatements.of(connection);
        const platform = platformOf(em);
        const text = (sql: string, params: readonly unknown[]) => {
          const statement = prepared.textFor(platform, sql, params);
          sentPrepared ||= statement.prepared;
          return statement.text;
        };
        executeDirectly(em, prefix, text);
        allowDeferredWrites(em, prefixSink(prefix, text));
        const { value, last, read } = await work(em);
        // The unit of work first, so the final statement comes after every row it describes.
        await em.flush();
        if (last) prefix.add(text(last.sql, last.params));
        if (read) prefix.readWithCommit(text(read.sql, read.params), read);
        return value;
      },
      prepareAfterTransaction,
    );
  } catch (error) {
    // A prepared statement whose plan a schema change outdated (the session's statements are deallocated after it):
    // nothing was written, and the command runs again like a version race, inlined and then prepared anew.
    if (isStalePlan(error) || (sentPrepared && isStalePlanError(error))) throw new StalePlanError((error as Error).message);
    // The COMMIT's own error comes back from `pg` unconverted: a deferred unique violation must still read as a race.
    throw asDriverException(orm.em, error);
  }
}
