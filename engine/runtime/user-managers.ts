import type { Transaction } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { executeDirectly } from './direct-execute.ts';
import type { StatementPrefix } from './statement-prefix.ts';

/**
 * The EntityManagers of one group-commit batch, one per acting user. Row-level security lets a user see rows
 * another user of the same site cannot (their own sessions, their profiles on other sites), and an EntityManager
 * serves a primary-key `findOne` from its identity map without asking the database: a manager shared by two users'
 * units could hand one of them what was loaded under the other's settings. Units of the same user share one (and
 * its cache), which keeps batches whole whoever acts.
 */
export class UserManagers {
  private readonly byUser = new Map<string, EntityManager>();

  constructor(
    private readonly orm: MikroORM,
    private readonly transaction: unknown,
    /** Null: the platform (the outbox relay), which sends raw SQL only (the ORM's site filter would read `site_id is null`). */
    private readonly siteId: string | null,
    private readonly prefix: StatementPrefix,
  ) {}

  /** The batch's EntityManager for `userId` (bound to the transaction, the site's filter, raw SQL sent directly). */
  of(userId: string | null): EntityManager {
    const key = userId ?? '';
    let em = this.byUser.get(key);
    if (!em) {
      em = this.orm.em.fork({ clear: true });
      em.setTransactionContext(this.transaction as Transaction);
      em.setFilterParams('site', { siteId: this.siteId });
      executeDirectly(em, this.prefix);
      this.byUser.set(key, em);
    }
    return em;
  }
}
