import { Migration } from '@mikro-orm/migrations';

/**
 * Whether a user's account reaches beyond one site: a profile on another site, or a platform operator's or an API
 * key's account. A site may change the account (email, password, names, phone, home address) only of a user who is
 * its own alone: users are shared between sites, and a dispatcher who attached a customer profile to another site's
 * admin must not be able to set that admin's password. Row-level security shows a site only its own profiles, so the
 * function reads them as the platform does (`app.platform` on for its own query only, put back as it was after it; a
 * function's SET clause would do it more simply, but PostgreSQL lets only a superuser put an `app.` setting there).
 */
export class AccountBeyondSite0036 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function account_beyond_site(wanted_user text, wanted_site text) returns boolean language plpgsql as $$
declare
  previous text := current_setting('app.platform', true);
  beyond boolean;
begin
  perform set_config('app.platform', 'on', true);
  select exists (select 1 from user_profile p where p.user_id = wanted_user and p.site_id <> wanted_site)
      or exists (select 1 from app_user u where u.id = wanted_user and (u.is_platform_operator or u.is_service_account))
    into beyond;
  perform set_config('app.platform', coalesce(previous, ''), true);
  return beyond;
end $$;
`);
  }
}
