import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox as an append-only log, with what is left to relay in a narrow table of its own (issue 3 benchmark).
 * Until now the relay stamped `relayed_at` on each row it sent: an UPDATE that rewrote the ~1.1 KB row and, since the
 * column was in the predicate of the pending index, two index entries (never a HOT update). That stamp was about a
 * fifth of PostgreSQL's CPU per job command and a quarter of its WAL. Now:
 * - `outbox_pending` holds `(seq, site_id)` of each row not yet relayed. A statement trigger fills it from the
 *   insert's transition table, whoever inserts (the command path's one-statement batch, or any other SQL), so the
 *   row and its pending entry commit together, as the stamp's absence did;
 * - the relay deletes a batch of pending entries in `seq` order and reads those rows by `seq` (`outbox_seq_idx`);
 *   outbox rows are never updated after their insert;
 * - rows written before this migration and not yet relayed are moved into `outbox_pending`, so none is lost;
 * - the table has a site column and the same row-level security as the outbox, so a tenant sees only its own.
 * A delete-drained queue table leaves dead rows: vacuum it early where autovacuum runs (the storage parameters).
 */
export class OutboxPending0022 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
select set_config('app.platform', 'on', true);
create table outbox_pending (seq bigint primary key, site_id text not null)
  with (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);
alter table outbox_pending enable row level security; alter table outbox_pending force row level security;
create policy outbox_pending_tenant on outbox_pending using (site_id = app_site() or app_is_platform());
insert into outbox_pending (seq, site_id) select seq, site_id from outbox where relayed_at is null;
alter table outbox drop column relayed_at;
create unique index outbox_seq_idx on outbox (seq);

create function queue_outbox_pending() returns trigger language plpgsql as $$
begin
  insert into outbox_pending (seq, site_id) select seq, site_id from new_rows;
  return null;
end $$;
create trigger outbox_pending_queue after insert on outbox
  referencing new table as new_rows
  for each statement execute function queue_outbox_pending();
select set_config('app.platform', '', true);
`);
  }
}
