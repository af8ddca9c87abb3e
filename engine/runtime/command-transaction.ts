import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { asDriverException, executeDirectly, formatSql } from './direct-execute.ts';
import { attachStatementPrefix } from './statement-prefix.ts';

/** The statement a command writes last (`?` placeholders, values), or null for none: its audit records and outbox rows. */
export type FinalStatement = { sql: string; params: unknown[] } | null;

/**
 * One command's transaction (`engine.command`), bound to a site and acting user as `inTenantScope` binds it (the
 * ORM's site filter; `app.site_id`, `app.user_id` and no platform flag for row-level security), in fewer round
 * trips: the tenant settings go out with the work's first statement, and the final statement `work` hands back
 * (written after everything the unit of work still had pending) with the COMMIT. Raw SQL (`em.execute` with a
 * string) goes straight to the connection, as in group commit.
 */
export async function inCommandTransaction<T>(
  orm: MikroORM,
  tenant: { siteId: string; userId: string | null },
  work: (em: EntityManager) => Promise<{ value: T; last: FinalStatement }>,
): Promise<T> {
  let detach: (() => void) | undefined;
  try {
    return await orm.em.fork().transactional(async (tx) => {
      tx.setFilterParams('site', { siteId: tenant.siteId });
      const prefix = await attachStatementPrefix(tx);
      detach = () => prefix.detach();
      prefix.add(
        `select set_config('app.site_id', ${prefix.literal(tenant.siteId)}, true), set_config('app.user_id', ${prefix.literal(tenant.userId ?? '')}, true), set_config('app.platform', '', true)`,
      );
      executeDirectly(tx, prefix);
      const { value, last } = await work(tx);
      // The unit of work first, so the final statement comes after every row it describes.
      await tx.flush();
      if (last) prefix.add(formatSql(tx, last.sql, last.params));
      return value;
    });
  } catch (error) {
    // The COMMIT's own error comes back from `pg` unconverted: a deferred unique violation must still read as a race.
    throw asDriverException(orm.em, error);
  } finally {
    // After the COMMIT (or ROLLBACK) went out with whatever was queued.
    detach?.();
  }
}
