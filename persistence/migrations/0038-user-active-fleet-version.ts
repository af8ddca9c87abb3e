import { Migration } from '@mikro-orm/migrations';

/**
 * A user's account switched off (or on) by the platform moves the dispatch fleet version of the sites where they
 * drive (migration 0018's `app_user` trigger fired only for name and email changes): the driver index now counts
 * such a driver as inactive, and a cached index would have kept offering them jobs.
 */
export class UserActiveFleetVersion0038 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
drop trigger app_user_fleet_version on app_user;
create trigger app_user_fleet_version after update of email, first_name, last_name, display_name, is_active on app_user
  for each row when (old.email is distinct from new.email or old.first_name is distinct from new.first_name
    or old.last_name is distinct from new.last_name or old.display_name is distinct from new.display_name
    or old.is_active is distinct from new.is_active)
  execute function bump_dispatch_fleet_version_of_user();
`);
  }
}
