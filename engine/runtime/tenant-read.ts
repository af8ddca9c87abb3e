import type { MikroORM } from '@mikro-orm/postgresql';
import type { TenantScope } from '../../persistence/tenant-scope.ts';
import { platformOf } from './direct-execute.ts';
import { inPooledTransaction } from './pooled-transaction.ts';
import { PreparedStatements, prepareAfterTransaction } from './prepared-statements.ts';

export type ReadRow = Record<string, unknown>;

/** One read-only statement (`?` placeholders and their values) in the caller's tenant scope: its rows. */
export type TenantRead = (sql: string, params: readonly unknown[]) => Promise<ReadRow[]>;

/**
 * A read in a tenant's scope (row-level security's settings, as `inTenantScope` binds them) in one round trip: the
 * BEGIN, the tenant settings, the statement and the COMMIT go out as one query (`inPooledTransaction` with the read
 * sent with its COMMIT), where a transaction through the ORM sends the BEGIN, the settings, each query and the COMMIT
 * in round trips of their own. The statement is prepared on the session after its first use, as the commands' are,
 * so PostgreSQL plans it once per session. For a read that one statement answers whole (a list with its nested rows
 * as JSON); values come back as `pg` parses them (timestamps as dates, `json` as objects).
 */
export function tenantRead(orm: MikroORM, tenant: TenantScope): TenantRead {
  return async (sql, params) => {
    const read: { rows?: ReadRow[] } = {};
    await inPooledTransaction(
      orm,
      tenant,
      async (_transaction, prefix, connection) => {
        prefix.readWithCommit(PreparedStatements.of(connection).textFor(platformOf(orm.em), sql, params).text, read);
      },
      prepareAfterTransaction,
    );
    return read.rows ?? [];
  };
}
