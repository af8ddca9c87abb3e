import type { MikroORM } from '@mikro-orm/postgresql';
import type { TenantScope } from '../../persistence/tenant-scope.ts';
import { platformOf } from './direct-execute.ts';
import { inlineValues } from './inline-values.ts';
import { inPooledTransaction } from './pooled-transaction.ts';
import { PreparedStatements, prepareAfterTransaction } from './prepared-statements.ts';
import { isStalePlanError } from './statement-rounds.ts';

export type ReadRow = Record<string, unknown>;

/**
 * One read-only statement (`?` placeholders and their values) in the caller's tenant scope: its rows. `inline`: sent
 * with its values in its text, planned for them at every call, never prepared: for a statement whose text varies with
 * the request (a search's filters), which would fill the session's prepared statements, and whose best plan depends
 * on its values (ranges, pages).
 */
export type TenantRead = (sql: string, params: readonly unknown[], options?: { inline?: boolean }) => Promise<ReadRow[]>;

/**
 * A read in a tenant's scope (row-level security's settings, as `inTenantScope` binds them) in one round trip: the
 * BEGIN, the tenant settings, the statement and the COMMIT go out as one query (`inPooledTransaction` with the read
 * sent with its COMMIT), where a transaction through the ORM sends the BEGIN, the settings, each query and the COMMIT
 * in round trips of their own. The statement is prepared on the session after its first use, as the commands' are,
 * so PostgreSQL plans it once per session (unless sent `inline`). For a read that one statement answers whole (a list
 * with its nested rows as JSON); values come back as the ORM's `pg` pool parses them (timestamps as text, `json` as
 * objects).
 */
export function tenantRead(orm: MikroORM, tenant: TenantScope): TenantRead {
  const readOnce = async (sql: string, params: readonly unknown[], inline: boolean): Promise<ReadRow[]> => {
    const read: { rows?: ReadRow[] } = {};
    await inPooledTransaction(
      orm,
      tenant,
      async (_transaction, prefix, connection) => {
        const platform = platformOf(orm.em);
        prefix.readWithCommit(inline ? inlineValues(platform, sql, params) : PreparedStatements.of(connection).textFor(platform, sql, params).text, read);
      },
      prepareAfterTransaction,
    );
    return read.rows ?? [];
  };
  return async (sql, params, options) => {
    const inline = options?.inline === true;
    try {
      return await readOnce(sql, params, inline);
    } catch (error) {
      // A prepared read whose plan a schema change outdated (`select j.*` once a column was added: "cached plan must
      // not change result type"): its session's statements are dropped (`prepareAfterTransaction`) and the read runs
      // again inline, as a command runs again after a stale plan. Any other failure, or one inline, is the answer.
      if (inline || !isStalePlanError(error)) throw error;
      return readOnce(sql, params, true);
    }
  };
}
