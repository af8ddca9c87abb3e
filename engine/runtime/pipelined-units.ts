import type { EntityManager } from '@mikro-orm/postgresql';
import type { Member, Outcome } from './batch-units.ts';
import { executeThrough, platformOf } from './direct-execute.ts';
import type { PreparedStatements } from './prepared-statements.ts';
import type { StatementPrefix } from './statement-prefix.ts';
import { StatementRounds } from './statement-rounds.ts';
import type { UserManagers } from './user-managers.ts';

/** A statement that reads (or sets a transaction-local setting): a unit that sent only these and failed wrote nothing. */
const READS = /^\s*select\b/i;

/**
 * Runs a batch's units at the same time, their raw SQL gathered into rounds (see {@link StatementRounds}): a batch
 * of units that each send k statements costs about k round trips instead of k per unit. No savepoints: a unit that
 * fails having sent only reads is answered with its error and the others go on; anything the rounds cannot keep
 * apart aborts the batch, and the caller rolls the transaction back and runs every unit again one after another in
 * savepoints. That is: a unit that failed after a write (its writes cannot be undone alone), a failed statement (it
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
  await Promise.all(
    batch.map(async (member): Promise<void> => {
      const { userId } = member.unit;
      const em = managers.of(userId);
      const platform = platformOf(em);
      let wrote = false;
      const view = executeThrough(em, (sql, params) => {
        wrote ||= !READS.test(sql);
        const statement = prepared.textFor(platform, sql, params);
        executed ||= statement.prepared;
        return rounds.submit(userId, statement.text);
      });
      try {
        const value = await member.unit.work(view);
        if (prefix.refused) rounds.abort('the ORM sent a query of its own');
        else if (hasUnflushedChanges(em)) rounds.abort('a unit left ORM changes to flush');
        finished.push({ member, ok: true, value });
      } catch (error) {
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
  return rounds.aborted ? null : finished;
}

/** True when the unit of work holds entities (loaded, created or removed) a flush could write. */
function hasUnflushedChanges(em: EntityManager): boolean {
  const uow = em.getUnitOfWork(false);
  if (uow.getPersistStack().size > 0 || uow.getRemoveStack().size > 0) return true;
  for (const _ of uow.getIdentityMap()) return true;
  return false;
}
