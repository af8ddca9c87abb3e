import { Migration } from '@mikro-orm/migrations';

/**
 * Position writes as HOT updates (issue 5 benchmark). Migration 0019 stamped `change_xid` on every position write:
 * with its index, each fix was a non-HOT update (a new entry in each of the table's three indexes), which was most of
 * PostgreSQL's cost per fix (about 70 µs against 30 µs measured). Now:
 * - the row stamp covers what rarely changes: a new driver actor (now the column's default, so the location path's
 *   upsert no longer runs a trigger per fix), its availability, its site;
 * - positions are logged per statement instead of per row: an AFTER UPDATE statement trigger writes ONE row to
 *   `driver_position_change` (the writing transaction's id and the drivers whose `last_lat`/`last_lng` it changed),
 *   whoever writes (the location path's group commit, or any other SQL). The dispatch driver index reads the rows its
 *   last snapshot does not see, as it reads `change_xid`, and then those drivers' current rows;
 * - the log is pruned by the location tracker (rows older than a minute); `driver_position_horizon` keeps, per
 *   site, the newest transaction id pruned, so a reader whose snapshot is older than that reloads every position
 *   rather than miss one;
 * - `driver_state` leaves half of each page free, so an update finds room for its new version on the same page
 *   (a HOT update needs that; at the default 100 about half of them did not).
 */
export class PositionChanges0020 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
drop trigger driver_state_change_xid on driver_state;
alter table driver_state alter column change_xid set default pg_current_xact_id();
create trigger driver_state_change_xid before update of availability, site_id on driver_state
  for each row execute function stamp_change_xid();
alter table driver_state set (fillfactor = 50);

create table driver_position_change (
  site_id text not null,
  change_xid xid8 not null default pg_current_xact_id(),
  user_ids text[] not null,
  created_at timestamptz not null default now());
create index driver_position_change_idx on driver_position_change (site_id, change_xid);
alter table driver_position_change enable row level security; alter table driver_position_change force row level security;
create policy driver_position_change_tenant on driver_position_change using (site_id = app_site() or app_is_platform());

create table driver_position_horizon (site_id text primary key, pruned_through xid8 not null);
alter table driver_position_horizon enable row level security; alter table driver_position_horizon force row level security;
create policy driver_position_horizon_tenant on driver_position_horizon using (site_id = app_site() or app_is_platform());

create function log_position_changes() returns trigger language plpgsql as $$
begin
  insert into driver_position_change (site_id, user_ids)
    select n.site_id, array_agg(n.user_id) from new_rows n join old_rows o on o.site_id = n.site_id and o.user_id = n.user_id
    where n.last_lat is distinct from o.last_lat or n.last_lng is distinct from o.last_lng
    group by n.site_id;
  return null;
end $$;
create trigger driver_state_position_log after update on driver_state
  referencing old table as old_rows new table as new_rows
  for each statement execute function log_position_changes();
`);
  }
}
