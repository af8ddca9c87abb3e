import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { asDriverException, formatSql } from './direct-execute.ts';
import { attachStatementPrefixTo, type PgConnection, type StatementPrefix } from './statement-prefix.ts';
import { UserManagers } from './user-managers.ts';

type Pool = { acquireConnection(): Promise<PgConnection>; releaseConnection(connection: PgConnection): Promise<unknown> };

/**
 * One unit of work of a group commit: its work runs inside its own savepoint on an EntityManager bound to the shared
 * transaction, shared only with the batch's other units of the same user (emptied after a unit that failed);
 * `committed` runs synchronously after the batch's COMMIT, in arrival order.
 */
export type Unit<T> = {
  siteId: string;
  userId: string | null;
  work: (em: EntityManager) => Promise<T>;
  committed?: (value: T) => void;
};

export type GroupCommitOptions<T> = {
  orm: MikroORM;
  /** Most units per transaction. PostgreSQL caches 64 subtransactions per backend: stay well under. */
  maxBatch?: number;
  /**
   * Transactions in flight at once (each holds one pooled connection). A batch's units run one after another, so its
   * length in round trips sets the commands' latency; four (the default) measured best with 16 commands in flight
   * on 2 cores, now that a batch's fixed cost is small (BEGIN, tenant settings, audit + outbox and COMMIT travel
   * with statements that go out anyway). With two, batches of about 8 took longer than the round trips they saved.
   */
  maxConcurrent?: number;
  /**
   * The statement (`?` placeholders, values) written once per batch with the values of the units that succeeded (in
   * order), sent in the same round trip as the COMMIT; null writes nothing.
   */
  commitStatement?: (values: T[]) => { sql: string; params: unknown[] } | null;
  /** Runs once after each batch committed. */
  afterCommit?: () => void;
};

type Member<T> = { unit: Unit<T>; resolve: (value: T) => void; reject: (error: unknown) => void };
type Outcome<T> = { member: Member<T>; ok: true; value: T } | { member: Member<T>; ok: false; error: unknown };

/**
 * Group commit: units that arrive together (for one site) share one transaction and one COMMIT, each in its own
 * savepoint, so a unit that fails rolls back alone and is answered with its error, while the others are answered
 * only once the batch has committed (an answered success is durable). Units of a batch run one after another on
 * the batch's connection; up to `maxConcurrent` batches run at once. A batch starts as soon as a slot is free and
 * takes every unit of its site that waited meanwhile, so under load batches grow and at rest a unit runs alone.
 *
 * When the batch cannot commit (or `beforeCommit` fails), no unit of it was written: each one runs again alone,
 * so one unit's failure at COMMIT (a deferred constraint) is reported to that unit only.
 */
export class GroupCommit<T> {
  private readonly queue: Member<T>[] = [];
  private running = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxConcurrent: number;

  constructor(private readonly options: GroupCommitOptions<T>) {
    this.maxBatch = options.maxBatch ?? 32;
    this.maxConcurrent = options.maxConcurrent ?? 4;
  }

  /** Runs `unit` in the next batch of its site; resolves after that batch committed, rejects with the unit's own error. */
  run(unit: Unit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ unit, resolve, reject });
      this.schedule();
    });
  }

  /** Units waiting for a batch. */
  get waiting(): number {
    return this.queue.length;
  }

  // Deferred to the next turn of the event loop, so units submitted by the same burst of I/O share a batch.
  private schedule(): void {
    if (this.scheduled || this.running >= this.maxConcurrent || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      // Waiting units are spread over the free slots: batches on several connections overlap their round trips.
      const size = Math.ceil(this.queue.length / (this.maxConcurrent - this.running));
      while (this.running < this.maxConcurrent && this.queue.length > 0) void this.start(this.take(size));
    });
  }

  /** The oldest waiting unit and the next ones of its site, in arrival order, up to `size` (at most `maxBatch`). */
  private take(size: number): Member<T>[] {
    const siteId = this.queue[0]!.unit.siteId;
    const batch: Member<T>[] = [];
    for (let i = 0; i < this.queue.length && batch.length < Math.min(size, this.maxBatch); ) {
      if (this.queue[i]!.unit.siteId === siteId) batch.push(...this.queue.splice(i, 1));
      else i += 1;
    }
    return batch;
  }

  private async start(batch: Member<T>[]): Promise<void> {
    this.running += 1;
    try {
      await this.commit(batch);
    } finally {
      this.running -= 1;
      this.schedule();
    }
  }

  private async commit(batch: Member<T>[]): Promise<void> {
    const outcomes: Outcome<T>[] = [];
    try {
      await this.inTransaction(batch[0]!.unit.siteId, async (managers, prefix) => {
        for (const member of batch) outcomes.push(await runInSavepoint(managers.of(member.unit.userId), prefix, member));
        const values = outcomes.flatMap((o) => (o.ok ? [o.value] : []));
        const statement = values.length > 0 ? this.options.commitStatement?.(values) : null;
        if (statement) prefix.add(formatSql(this.options.orm.em, statement.sql, statement.params));
      });
    } catch (error) {
      // The transaction rolled back whole. A unit that failed on its own gets its own error; the others (written,
      // or not reached) run again, each alone, so the error reaches only the unit it belongs to.
      const failed = new Map(outcomes.flatMap((o) => (o.ok ? [] : [[o.member, o.error] as const])));
      for (const [member, own] of failed) member.reject(own);
      const others = batch.filter((member) => !failed.has(member));
      if (batch.length === 1) for (const member of others) member.reject(this.converted(error));
      else for (const member of others) await this.commit([member]);
      return;
    }
    for (const o of outcomes) if (o.ok) o.member.unit.committed?.(o.value);
    this.options.afterCommit?.();
    for (const o of outcomes) {
      if (o.ok) o.member.resolve(o.value);
      else o.member.reject(o.error);
    }
  }

  /**
   * One transaction bound to the site, as `inTenantScope` binds one (the ORM's site filter, and `app.site_id` for
   * row-level security with no user and no platform flag), on a connection taken from the pool here: knex's
   * transaction runs on it (so the ORM's own queries and flushes stay inside), but its BEGIN and the tenant settings
   * travel with the first unit's first statement instead of in round trips of their own, and no MikroORM
   * transaction (fork, flush, events) wraps the batch.
   */
  private async inTransaction(siteId: string, work: (managers: UserManagers, prefix: StatementPrefix) => Promise<void>): Promise<void> {
    const knex = this.options.orm.em.getConnection().getKnex();
    const pool = knex.client as unknown as Pool;
    const connection = await pool.acquireConnection();
    const prefix = attachStatementPrefixTo(connection, { deferBegin: true });
    try {
      prefix.add(`select set_config('app.site_id', ${prefix.literal(siteId)}, true), set_config('app.user_id', '', true), set_config('app.platform', '', true)`);
      await knex.transaction((trx) => work(new UserManagers(this.options.orm, trx, siteId, prefix), prefix), { connection });
    } finally {
      prefix.detach();
      // knex tags a connection with its transaction and untags only connections it took from the pool itself.
      Reflect.deleteProperty(connection, '__knexTxId');
      await pool.releaseConnection(connection);
    }
  }

  /** A database error raised at COMMIT (the batch's statement travels with it) in the ORM's exception classes, as `em.execute` raises them. */
  private converted(error: unknown): unknown {
    return asDriverException(this.options.orm.em, error);
  }
}

let savepoints = 0;

/**
 * Runs one unit in its own savepoint, with the acting user bound for row-level security (a transaction-local
 * setting, undone with the savepoint). Both statements go out with the unit's first statement (`prefix`), after
 * anything the batch queued before them (its tenant settings, if no unit sent a statement yet); a unit that failed
 * before sending any statement has nothing to undo. A failed unit's savepoint is rolled back by its own name
 * (unique), so an error there fails the whole batch rather than undoing another unit, and the batch's
 * EntityManager forgets what the unit loaded or created.
 */
async function runInSavepoint<T>(em: EntityManager, prefix: StatementPrefix, member: Member<T>): Promise<Outcome<T>> {
  const { unit } = member;
  const name = `engine_unit_${(savepoints = (savepoints + 1) % 1_000_000)}`;
  const before = prefix.pending;
  prefix.add(`savepoint ${name}`);
  prefix.add(`select set_config('app.user_id', ${prefix.literal(unit.userId ?? '')}, true)`);
  try {
    const value = await unit.work(em);
    await em.flush();
    if (!prefix.flushed) prefix.discard(before);
    return { member, ok: true, value };
  } catch (error) {
    if (prefix.flushed) await em.execute(`rollback to savepoint ${name}`);
    else prefix.discard(before);
    em.clear();
    return { member, ok: false, error };
  }
}
