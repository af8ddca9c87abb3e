import type { EntityManager } from '@mikro-orm/postgresql';
import type { Member, Outcome } from './batch-units.ts';
import { allowDeferredWrites } from './deferred-writes.ts';
import { executeThrough, platformOf } from './direct-execute.ts';
import type { PreparedStatements } from './prepared-statements.ts';
import type { StatementPrefix } from './statement-prefix.ts';
import { StatementRounds, userSetting } from './statement-rounds.ts';
import type { UserManagers } from './user-managers.ts';

/** A statement that reads (or sets a transaction-local setting): a unit that sent only these and failed wrote nothing. */
const READS = /^\s*select\b/i;
/**
 * A write that checks itself and raises when its row was not as planned (`queued_write_holds`, migration 0024;
 * `dispatch_plan_holds`, 0023): one may wait for the COMMIT, since a miss fails the COMMIT and the batch runs again.
 */
const SELF_CHECKING = /\b(queued_write_holds|dispatch_plan_holds)\(/;

/**
 * Runs a batch's units at the same time, their raw SQL gathered into rounds (see {@link StatementRounds}): a batch
 * of units that each send k statements costs about k round trips instead of k per unit. No savepoints: a unit that
 * fails having sent only reads is answered with its error and the others go on; anything the rounds cannot keep
 * apart aborts the batch, and the caller rolls the transaction back and runs every unit again one after another in
 * savepoints. A unit's deferred writes (`deferWrite`, `sendWithNext`) go out just before its next statement, in
 * the same round; those it leaves when it finishes go with the COMMIT when each checks itself, else in one more
 * round of its own then (a failed unit's unsent ones are dropped).
 * Anything else aborts: a unit that failed after a write (its writes cannot be undone alone), a failed statement (it
 * cannot be told whose), a query the ORM sent of its own (it would run under whichever user the last statement set;
 * the connection refuses it unsent), and ORM changes left for a flush.
 * @returns each unit's outcome in the order the units finished, which is the order of their writes (a unit whose
 *   last write went in a later round finishes later): audit and outbox rows follow it, so an entity's events keep
 *   their version order; null when the batch was aborted (nothing of it may commit)
 */
export async function runPipelined<T>(batch: Member<T>[], managers: UserManagers, prefix: StatementPrefix, prepared: PreparedStatements): Promise<Outcome<T>[] | null> {
  prefix.exclusive();
  const rounds = new StatementRounds({ send: (text) => prefix.run(text), literal: (value) => prefix.literal(value), units: batch.length });
  let executed = false;
  const finished: Outcome<T>[] = [];
  /** The deferred writes each unit left unsent when it finished: they go out with the COMMIT. */
  const tails = new Map<Member<T>, string[]>();
  await Promise.all(
    batch.map(async (member): Promise<void> => {
      const { userId } = member.unit;
      const em = managers.of(userId);
      const platform = platformOf(em);
      let wrote = false;
      const textOf = (sql: string, params: readonly unknown[]) => {
        const statement = prepared.textFor(platform, sql, params);
        executed ||= statement.prepared;
        return statement.text;
      };
      // Deferred statements (see deferred-writes.ts) travel just before the unit's next statement, in its round.
      let deferred: { text: string; writes: boolean; checked: boolean }[] = [];
      const view = executeThrough(em, (sql, params) => {
        const before = deferred;
        deferred = [];
        wrote ||= !READS.test(sql) || before.some((statement) => statement.writes);
        return rounds.submit(userId, textOf(sql, params), before.map((statement) => statement.text));
      });
      allowDeferredWrites(view, {
        statement: (text) => deferred.push({ text, writes: !READS.test(text), checked: SELF_CHECKING.test(text) }),
        write: (sql, params) => deferred.push({ text: textOf(sql, params), writes: !READS.test(sql), checked: SELF_CHECKING.test(sql) }),
      });
      try {
        const value = await member.unit.work(view);
        if (prefix.refused) rounds.abort('the ORM sent a query of its own');
        else if (hasUnflushedChanges(em)) rounds.abort('a unit left ORM changes to flush');
        // A write that does not check itself goes out now, in this unit's place among the rounds: at the COMMIT it
        // would land after the writes of units that finished later (a route's `active_route_id` set back after
        // another unit cleared it).
        if (deferred.some((statement) => statement.writes && !statement.checked)) {
          const unsent = deferred;
          deferred = [];
          wrote = true;
          await rounds.submit(userId, 'select 1', unsent.map((statement) => statement.text));
        }
        tails.set(member, deferred.map((statement) => statement.text));
        finished.push({ member, ok: true, value });
      } catch (error) {
        // Its deferred writes were never sent: they are dropped with it.
        if (prefix.refused) rounds.abort('the ORM sent a query of its own');
        else if (wrote) rounds.abort('a unit failed after writing');
        finished.push({ member, ok: false, error });
      } finally {
        rounds.finished();
      }
    }),
  );
  // A failed statement may have been a prepared one that can no longer run (its plan outlived a schema change);
  // a data error (a unique violation the engine retries) keeps the session's statements.
  if (rounds.failedOnSchema && executed) prepared.forgetAll();
  if (rounds.aborted) return null;
  queueTails(finished, tails, rounds.currentUserId, prefix);
  return finished;
}

/**
 * The deferred writes the units left, in the order they finished, each unit's behind a setting of its user when the
 * statement before ran as another: queued to go out with the COMMIT. One that fails (a write that checks itself and
 * finds its row changed by another unit of the batch) fails the COMMIT, and the batch runs again in savepoints.
 */
function queueTails<T>(finished: Outcome<T>[], tails: Map<Member<T>, string[]>, userId: string, prefix: StatementPrefix): void {
  let current = userId;
  for (const outcome of finished) {
    const tail = tails.get(outcome.member);
    if (!outcome.ok || !tail?.length) continue;
    const user = outcome.member.unit.userId ?? '';
    if (user !== current) prefix.add(userSetting((value) => prefix.literal(value), user));
    current = user;
    for (const text of tail) prefix.add(text);
  }
}

/** True when the unit of work holds entities (loaded, created or removed) a flush could write. */
function hasUnflushedChanges(em: EntityManager): boolean {
  const uow = em.getUnitOfWork(false);
  if (uow.getPersistStack().size > 0 || uow.getRemoveStack().size > 0) return true;
  for (const _ of uow.getIdentityMap()) return true;
  return false;
}
