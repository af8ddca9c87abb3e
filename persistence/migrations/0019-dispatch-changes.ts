import { Migration } from '@mikro-orm/migrations';

/**
 * What the dispatch driver index reads between decisions (issue 4 benchmark): every write that changes a driver's
 * availability or position (`driver_state`) or a job's open-load contribution (`job`: phase, driver, deletion, site)
 * stamps the row with the writing transaction's id (`change_xid`, an `xid8`, set by a BEFORE trigger). A process
 * remembers the snapshot (`pg_current_snapshot()`) of its last read and next reads only the rows whose stamp that
 * snapshot does not see (`not pg_visible_in_snapshot`): exactly the changes committed since, including those of
 * transactions that were still running then, whatever their commit order. The `(site_id, change_xid)` indexes keep
 * that read to the changed rows (`change_xid >= pg_snapshot_xmin(...)`). Rows written before this migration keep 0,
 * which every snapshot sees: a process reads them once, in its first full read.
 */
export class DispatchChanges0019 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table driver_state add column change_xid xid8 not null default '0';
alter table job add column change_xid xid8 not null default '0';

create function stamp_change_xid() returns trigger language plpgsql as $$
begin
  new.change_xid := pg_current_xact_id();
  return new;
end $$;

create trigger driver_state_change_xid before insert or update of availability, last_lat, last_lng, site_id on driver_state
  for each row execute function stamp_change_xid();
create trigger job_change_xid before insert or update of phase, driver_user_id, deleted_at, site_id on job
  for each row execute function stamp_change_xid();

create index driver_state_change_xid_idx on driver_state (site_id, change_xid);
create index job_change_xid_idx on job (site_id, change_xid);
`);
  }
}
