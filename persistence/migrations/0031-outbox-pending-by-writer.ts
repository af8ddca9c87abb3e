import { Migration } from '@mikro-orm/migrations';

/**
 * The command path writes its outbox rows' `outbox_pending` entries itself (issue 3 benchmark), in the same statement
 * as the rows (`insert … returning seq, site_id` feeding `insert into outbox_pending`), instead of migration 0022's
 * statement trigger, which made every insert capture a transition table and run a plpgsql function.
 * - `queued_by_writer` says the inserting statement wrote the row's pending entry itself; it defaults to false, so a
 *   writer that does not know about it (the ORM's `appendOutbox`, any other SQL) still gets its entries;
 * - for those, a row trigger queues the entry; its `when` clause is evaluated without calling the function, so the
 *   command path's rows cost no trigger call.
 * Set `queued_by_writer` only in a statement that also inserts the row's pending entry: a row with it set and no
 * entry is never relayed.
 */
export class OutboxPendingByWriter0031 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table outbox add column queued_by_writer boolean not null default false;
drop trigger outbox_pending_queue on outbox;
drop function queue_outbox_pending();
create function queue_outbox_row_pending() returns trigger language plpgsql as $$
begin
  insert into outbox_pending (seq, site_id) values (new.seq, new.site_id);
  return null;
end $$;
create trigger outbox_pending_queue_row after insert on outbox
  for each row when (not new.queued_by_writer) execute function queue_outbox_row_pending();
`);
  }
}
