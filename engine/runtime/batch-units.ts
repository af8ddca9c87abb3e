import type { EntityManager } from '@mikro-orm/postgresql';
import type { StatementPrefix } from './statement-prefix.ts';
import { userSetting } from './statement-rounds.ts';

/**
 * One unit of work of a group commit: its work runs on an EntityManager bound to the batch's transaction, shared
 * only with the batch's other units of the same user; `committed` runs synchronously after the batch's COMMIT, in
 * arrival order.
 */
export type Unit<T> = {
  siteId: string;
  userId: string | null;
  work: (em: EntityManager) => Promise<T>;
  committed?: (value: T) => void;
};

/** A unit waiting for its batch, with its caller's promise. */
export type Member<T> = { unit: Unit<T>; resolve: (value: T) => void; reject: (error: unknown) => void };

/** How a unit's work ended within its batch (the batch may still fail to commit). */
export type Outcome<T> = { member: Member<T>; ok: true; value: T } | { member: Member<T>; ok: false; error: unknown };

let savepoints = 0;

/**
 * Runs one unit in its own savepoint (the batch's units one after another), with the acting user bound for
 * row-level security (a transaction-local setting, undone with the savepoint). Both statements go out with the
 * unit's first statement (`prefix`), after anything the batch queued before them (its tenant settings, if no unit
 * sent a statement yet); a unit that failed before sending any statement has nothing to undo. A failed unit's
 * savepoint is rolled back by its own name (unique), so an error there fails the whole batch rather than undoing
 * another unit, and the batch's EntityManager forgets what the unit loaded or created.
 */
export async function runInSavepoint<T>(em: EntityManager, prefix: StatementPrefix, member: Member<T>): Promise<Outcome<T>> {
  const { unit } = member;
  const name = `engine_unit_${(savepoints = (savepoints + 1) % 1_000_000)}`;
  const before = prefix.pending;
  prefix.add(`savepoint ${name}`);
  prefix.add(userSetting((value) => prefix.literal(value), unit.userId));
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
