import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

/**
 * Whose data a unit of work may touch: one site (or the platform, `siteId` null), the acting user (who may see
 * their own profiles and sessions on every site) and, for a platform operator only, every tenant (`platform`).
 */
export type TenantScope = { siteId: string | null; userId?: string | null; platform?: boolean };

/**
 * Runs `work` in one transaction bound to a tenant: the ORM's site filter gets the site id (so every tenant query is
 * filtered) and the transaction-local `app.site_id` / `app.user_id` settings feed PostgreSQL's row-level security.
 * Everything `work` writes commits together or not at all.
 */
export async function inTenantScope<T>(
  orm: MikroORM,
  scope: TenantScope,
  work: (em: EntityManager) => Promise<T>,
): Promise<T> {
  return orm.em.fork().transactional(async (tx) => {
    await switchTenant(tx, scope);
    return work(tx);
  });
}

/**
 * Re-binds an open transaction to another tenant, for the few flows that cross one on purpose (a platform
 * operator creating a site's first admin, a user choosing a site after pre-authentication). Pending changes are
 * flushed first, so they are checked against the tenant they were made under.
 */
export async function switchTenant(em: EntityManager, scope: TenantScope): Promise<void> {
  await em.flush();
  em.setFilterParams('site', { siteId: scope.siteId });
  await em.execute(
    `select set_config('app.site_id', ?, true), set_config('app.user_id', ?, true), set_config('app.platform', ?, true)`,
    [scope.siteId ?? '', scope.userId ?? '', scope.platform ? 'on' : ''],
  );
}

/**
 * The statement that binds an open transaction to a tenant for row-level security (transaction-local settings),
 * its values quoted by `literal`: for paths that send it as text ahead of their first statement rather than as a
 * round trip of its own (`switchTenant` sends the same settings with parameters).
 */
export function tenantSettingsSql(scope: TenantScope, literal: (value: string) => string): string {
  const platform = scope.platform === true ? 'on' : '';
  return `select set_config('app.site_id', ${literal(scope.siteId ?? '')}, true), set_config('app.user_id', ${literal(scope.userId ?? '')}, true), set_config('app.platform', '${platform}', true)`;
}
