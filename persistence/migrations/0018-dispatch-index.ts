import { Migration } from '@mikro-orm/migrations';

/**
 * Dispatch driver index (issue 4 benchmark). `dispatch_fleet_version` holds one counter per site, bumped in the same
 * transaction by every write to the slow-changing driver facts (worker, worker_schedule, vehicle, user_profile, and a
 * user's name or email): the in-memory index of each process compares it with the version it loaded and reloads on a
 * change, so a committed fleet change is seen by the next decision. The triggers run as the writer, so the row-level
 * policy applies as usual (a tenant writes its own site's counter). A name changed while acting in another site does
 * not reach this site's counter (that row is invisible there): the index also reloads after a minute at the latest.
 * The partial index serves the per-decision read of open-job loads (phase assigned or in progress).
 */
export class DispatchIndex0018 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table dispatch_fleet_version (
  site_id text primary key references site(id) deferrable initially deferred,
  version bigint not null default 1);
alter table dispatch_fleet_version enable row level security; alter table dispatch_fleet_version force row level security;
create policy dispatch_fleet_version_tenant on dispatch_fleet_version using (site_id = app_site() or app_is_platform());

create function bump_dispatch_fleet_version() returns trigger language plpgsql as $$
declare changed text := case when tg_op = 'DELETE' then old.site_id else new.site_id end;
begin
  insert into dispatch_fleet_version as v (site_id) values (changed) on conflict (site_id) do update set version = v.version + 1;
  if tg_op = 'UPDATE' and old.site_id is distinct from new.site_id then
    insert into dispatch_fleet_version as v (site_id) values (old.site_id) on conflict (site_id) do update set version = v.version + 1;
  end if;
  return null;
end $$;

create function bump_dispatch_fleet_version_of_user() returns trigger language plpgsql as $$
begin
  update dispatch_fleet_version set version = version + 1
  where site_id in (select p.site_id from user_profile p where p.user_id = new.id);
  return null;
end $$;

create trigger worker_fleet_version after insert or update or delete on worker for each row execute function bump_dispatch_fleet_version();
create trigger worker_schedule_fleet_version after insert or update or delete on worker_schedule for each row execute function bump_dispatch_fleet_version();
create trigger vehicle_fleet_version after insert or update or delete on vehicle for each row execute function bump_dispatch_fleet_version();
create trigger user_profile_fleet_version after insert or update or delete on user_profile for each row execute function bump_dispatch_fleet_version();
create trigger app_user_fleet_version after update of email, first_name, last_name, display_name on app_user
  for each row when (old.email is distinct from new.email or old.first_name is distinct from new.first_name
    or old.last_name is distinct from new.last_name or old.display_name is distinct from new.display_name)
  execute function bump_dispatch_fleet_version_of_user();

create index job_open_driver_idx on job (site_id, driver_user_id)
  where phase in ('assigned', 'in_progress') and deleted_at is null and driver_user_id is not null;
`);
  }
}
