import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommandScope } from '../commands/apply-transition.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';

/**
 * BullMQ cannot join the database transaction that stores a scheduled dispatch: its due job is added before that
 * transaction commits, and one due at once (or in a few milliseconds) can run while the records are not visible
 * yet. Found nothing then, it used to end, and the pending records it should have carried out stayed pending for
 * good (a job blocked by its one active dispatch). So the job carries the id of the transaction that scheduled it,
 * and a run first asks PostgreSQL whether that transaction has ended: still running, the run fails and the queue
 * runs it again after its backoff; ended, the records are read (none if it rolled back: nothing to do). The table
 * queue writes the job in that same transaction, so it never runs early and carries no id.
 */
export async function schedulingTransaction(queue: DurableQueue, scope: CommandScope): Promise<string | undefined> {
  if (queue.backend !== 'bullmq') return undefined;
  // The top-level transaction's id even inside a savepoint; assigned already, the records were just inserted.
  const [row] = await scope.em.execute<{ xid: string }[]>('select pg_current_xact_id()::text as xid');
  return row!.xid;
}

/** A due job that ran before the transaction that scheduled it committed (see {@link schedulingTransaction}). */
class ScheduleNotCommitted extends Error {
  constructor(xid: string) {
    super(`the transaction ${xid} that scheduled this dispatch has not committed yet; the queue runs it again later`);
    this.name = 'ScheduleNotCommitted';
  }
}

/**
 * Called before a due job reads its pending records: throws {@link ScheduleNotCommitted} while the transaction that
 * scheduled them is still running (as this statement's snapshot sees it), so that the run fails and the queue runs
 * it again. Once it has ended here it has ended for every later statement too (snapshots only move forward), so the
 * read that follows sees the records if it committed; none if it rolled back, and the run ends. Asking
 * `pg_xact_status` instead left a gap: a transaction whose commit is recorded but which a new snapshot still counts as
 * running, so that a read right after missed its records.
 */
export async function assertScheduleSettled(em: EntityManager, xid: string | undefined): Promise<void> {
  if (xid === undefined) return;
  const [row] = await em.execute<{ ended: boolean }[]>('select pg_visible_in_snapshot(?::xid8, pg_current_snapshot()) as ended', [xid]);
  if (row?.ended !== true) throw new ScheduleNotCommitted(xid);
}
