import { Migration } from '@mikro-orm/migrations';

/**
 * The table-backed durable queue (engine/queue/table-queue.ts), used when there is no Redis. Not a tenant table:
 * it holds work for every site, and only the engine's workers read it, so it has no row-level security.
 *
 * The key is (queue, id): the job id is the dedupe key within a queue, as in BullMQ. `seq` keeps jobs due at the same
 * time in insertion order (the outbox relay inserts a batch in one transaction, where `now()` does not move); it is an
 * identity column rather than bigserial because inserting into it then needs no grant on a sequence.
 * `attempts_made` counts started runs; `locked_until` is the running worker's lease, renewed while it runs, so a job
 * whose worker died is taken again once the lease expires.
 */
export class Queue0003 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table queue_job (
  queue text not null, id text not null, seq bigint generated always as identity, name text not null, data jsonb not null,
  run_at timestamptz not null, attempts_made integer not null default 0, max_attempts integer not null check (max_attempts >= 1),
  backoff_ms integer not null check (backoff_ms >= 0),
  status text not null check (status in ('waiting', 'active', 'completed', 'failed')), locked_until timestamptz,
  last_error text, created_at timestamptz not null, updated_at timestamptz not null,
  primary key (queue, id));
create index queue_job_due_idx on queue_job (queue, status, run_at);
`);
  }
}
