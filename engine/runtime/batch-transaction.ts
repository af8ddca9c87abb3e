import type { MikroORM } from '@mikro-orm/postgresql';
import { PreparedStatements, prepareAfterTransaction } from './prepared-statements.ts';
import { inPooledTransaction } from './pooled-transaction.ts';
import type { StatementPrefix } from './statement-prefix.ts';
import { UserManagers } from './user-managers.ts';

/** The tenant a batch transaction is bound to: one site, or (the outbox relay) the platform, which sees every site. */
export type BatchTenant = { siteId: string; platform?: false } | { siteId: null; platform: true };

/**
 * One transaction bound to the tenant, as `inTenantScope` binds one (the ORM's site filter, and `app.site_id` /
 * `app.platform` for row-level security, with no user) by `inPooledTransaction`: its BEGIN and the tenant settings
 * travel with the first statement instead of in round trips of their own, and no MikroORM transaction (fork,
 * flush, events) wraps the batch. After it ended, and before the connection goes back to the pool, the statements
 * the batch sent for the first time on this session are prepared for the next batches.
 */
export async function inBatchTransaction(
  orm: MikroORM,
  tenant: BatchTenant,
  work: (managers: UserManagers, prefix: StatementPrefix, prepared: PreparedStatements) => Promise<void>,
): Promise<void> {
  await inPooledTransaction(
    orm,
    { siteId: tenant.siteId, userId: null, platform: tenant.platform === true },
    (trx, prefix, connection) => work(new UserManagers(orm, trx, tenant.siteId, prefix), prefix, PreparedStatements.of(connection)),
    prepareAfterTransaction,
  );
}
