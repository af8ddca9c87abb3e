import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommandScope } from '../commands/apply-transition.ts';
import type { DurableQueue } from '../queue/durable-queue.ts';

/**
 * BullMQ cannot join the database transaction that stores a scheduled dispatch: its due job is added before that
 * transaction commits, and one due at once (or in a few milliseconds) can run while the records are not visible
 * yet. Found nothing then, it used to end, and the pending records it should have carried out stayed pending for
 * good (a job blocked by its one active dispatch). So the job carries the id of the transaction that scheduled it,
 * and a run that finds nothing asks PostgreSQL how that transaction ended: still open, the run fails and the
 * queue runs it again after its backoff; rolled back, there is nothing to do. The table queue writes the job in
 * that same transaction, so it never runs early and carries no id.
 */
export async function schedulingTransaction(queue: DurableQueue, scope: CommandScope): Promise<string | undefined> {
  if (queue.backend !== 'bullmq') return undefined;
  // The top-level transaction's id even inside a savepoint; assigned already, the records were just inserted.
  const [row] = await scope.em.execute<{ xid: string }[]>('select pg_current_xact_id()::text as xid');
  return row!.xid;
}

/** A due job that ran before the transaction that scheduled it committed (see {@link schedulingTransaction}). */
export class ScheduleNotCommitted extends Error {
  constructor(xid: string) {
    super(`the transaction ${xid} that scheduled this dispatch has not committed yet; the queue runs it again later`);
    this.name = 'ScheduleNotCommitted';
  }
}

/**
 * Called when a due job found none of its pending records: throws {@link ScheduleNotCommitted} while the
 * transaction that scheduled it is still in progress; returns when it committed (the records were carried out,
 * cancelled or deleted since) or rolled back (they never existed).
 */
export async function assertScheduleSettled(em: EntityManager, xid: string | undefined): Promise<void> {
  if (xid === undefined) return;
  const [row] = await em.execute<{ status: string | null }[]>('select pg_xact_status(?::xid8) as status', [xid]);
  if (row?.status === 'in progress') throw new ScheduleNotCommitted(xid);
}
