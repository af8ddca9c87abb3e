import { Migration } from '@mikro-orm/migrations';

/**
 * Only driver profiles move a site's dispatch fleet version (migration 0018). The driver index reads profiles with
 * `role = 'driver'` and nothing else, yet every profile write bumped the version: a back office that creates a job
 * with a new customer (find or create, issue 3) wrote a customer profile, and the site's next dispatch reloaded every
 * driver's slow facts for nothing. Now the `user_profile` triggers fire for rows that are, or were, a driver's, and a
 * user's name or email change bumps only the sites where that user drives.
 */
export class DriverProfileFleetVersion0031 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
drop trigger user_profile_fleet_version on user_profile;
create trigger user_profile_insert_fleet_version after insert on user_profile
  for each row when (new.role = 'driver') execute function bump_dispatch_fleet_version();
create trigger user_profile_update_fleet_version after update on user_profile
  for each row when (old.role = 'driver' or new.role = 'driver') execute function bump_dispatch_fleet_version();
create trigger user_profile_delete_fleet_version after delete on user_profile
  for each row when (old.role = 'driver') execute function bump_dispatch_fleet_version();

create or replace function bump_dispatch_fleet_version_of_user() returns trigger language plpgsql as $$
begin
  update dispatch_fleet_version set version = version + 1
  where site_id in (select p.site_id from user_profile p where p.user_id = new.id and p.role = 'driver');
  return null;
end $$;
`);
  }
}
