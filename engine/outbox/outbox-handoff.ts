import type { ActiveSubscription } from '../webhooks/relay-fan-out.ts';
import type { OutboxRow, QueueJobs } from './relayed-jobs.ts';

/**
 * A relayed batch whose jobs went to a queue that keeps nothing in PostgreSQL (BullMQ), as `outbox_handoff` records
 * it (migration 0041): enough for the queue sweeper to tell whether each job is still queued and to build the jobs
 * again, with the same ids, if the queue lost them.
 */
export type OutboxHandoff = {
  /** The `seq`s of the batch's rows, in order (bigints as text). */
  seqs: string[];
  /** The active subscriptions the fan-out used, by site (sites with none left out). */
  subscriptions: Record<string, ActiveSubscription[]>;
  /** The ids of the jobs added, by queue. */
  jobs: Record<string, string[]>;
};

/**
 * The statement that records a relayed batch's hand-off, values inlined (it goes out with the relay's COMMIT, so it
 * costs no round trip, and commits or rolls back with the delete of the batch's `outbox_pending` entries). Null when
 * the batch added no job (nothing to lose).
 *
 * @param literal the connection's quoting of a string as an SQL literal
 */
export function handoffInsert(
  rows: readonly OutboxRow[],
  subscriptions: ReadonlyMap<string, ActiveSubscription[]>,
  added: readonly QueueJobs[],
  literal: (value: string) => string,
): string | null {
  if (added.length === 0 || rows.length === 0) return null;
  const seqs = rows.map((row) => assertSeq(row.seq));
  const handoff: Omit<OutboxHandoff, 'seqs'> = {
    subscriptions: Object.fromEntries([...subscriptions].filter(([, list]) => list.length > 0)),
    jobs: Object.fromEntries(added.map((entry) => [entry.queue, entry.jobs.map((job) => job.options.jobId)])),
  };
  return `insert into outbox_handoff (first_seq, seqs, subscriptions, jobs, checked_at) values (${seqs[0]}, '{${seqs.join(',')}}'::bigint[], `
    + `${literal(JSON.stringify(handoff.subscriptions))}::jsonb, ${literal(JSON.stringify(handoff.jobs))}::jsonb, now())`;
}

/** A `seq` as read from the database is a bigint's digits; anything else must never reach the inlined statement. */
function assertSeq(seq: string): string {
  if (!/^\d+$/.test(String(seq))) throw new Error(`unexpected outbox seq ${JSON.stringify(seq)}`);
  return String(seq);
}
