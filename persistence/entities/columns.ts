import { p } from '@mikro-orm/core';

/** created_at / updated_at, set by the ORM on insert and update. */
export function timestamps() {
  return {
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  };
}

/**
 * The tenant filter: every query on a tenant entity needs `{siteId}` params, so a query that forgot its site
 * fails instead of reading every site (MikroORM throws when an enabled filter has no arguments).
 */
export const siteFilter = {
  site: { name: 'site', cond: (args: { siteId: string }) => ({ siteId: args.siteId }), default: true, args: true },
};

/** Tenant filter for rows that may also be global (`site_id` null), such as shared addresses. */
export const siteOrGlobalFilter = {
  site: {
    name: 'site',
    cond: (args: { siteId: string }) => ({ $or: [{ siteId: args.siteId }, { siteId: null }] }),
    default: true,
    args: true,
  },
};
