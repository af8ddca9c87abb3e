import { Migration } from '@mikro-orm/migrations';

/**
 * What PostgreSQL keeps so that a Redis that loses its data (a restart without persistence, a failover) loses no
 * acknowledged event (engine/queue/queue-sweeper.ts):
 * - `outbox_handoff`: one row per relayed batch that added jobs to BullMQ (the relay deletes the batch's
 *   `outbox_pending` entries, so without it nothing in the database would say these events are not done yet): its
 *   rows' `seq`s, the subscriptions the fan-out used and the ids of the jobs it added; `checked_at` is the hand-off's
 *   time, moved on each time the sweeper finds a job still queued. The sweeper deletes the row once every job has
 *   finished, and adds again, under the same ids, the jobs the queue no longer has. Not a tenant
 *   table (no site column, like `queue_job`): the relay and the sweeper run for the platform.
 * - `webhook_delivery.retry_due_at`: on a failed attempt, when its retry is due; cleared when the retry is recorded.
 *   The partial index holds only retries still to run.
 */
export class QueueHandoff0041 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table outbox_handoff (
  first_seq bigint primary key, seqs bigint[] not null, subscriptions jsonb not null, jobs jsonb not null,
  checked_at timestamptz not null)
  with (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);
create index outbox_handoff_checked_idx on outbox_handoff (checked_at);
alter table webhook_delivery add column retry_due_at timestamptz;
create index webhook_delivery_retry_due_idx on webhook_delivery (retry_due_at) where retry_due_at is not null;
`);
  }
}
