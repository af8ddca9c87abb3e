import { Migration } from '@mikro-orm/migrations';

/**
 * Whether a site may change a shared account (email, password, names, phone, home address): `account_beyond_site`
 * (migration 0036) said no as soon as the user had a profile on any other site, so a site that linked another
 * site's dispatcher as its customer (`POST /customer` with their email) locked that site out of managing its own
 * staff. Now the account is the site's where the user's first profile is (the platform's for an operator or an API
 * key's account): a site that took the user on later may not change it, the first one still may, unless the user is
 * another site's staff (a shop where someone was a customer first must not take over the admin account another
 * site gave them since).
 * `account_beyond_site` stays for the stricter question of whose mail may carry a password reset.
 */
export class AccountOwnerSite0040 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function account_owned_elsewhere(wanted_user text, wanted_site text) returns boolean language plpgsql as $$
declare
  previous text := current_setting('app.platform', true);
  elsewhere boolean;
begin
  perform set_config('app.platform', 'on', true);
  select exists (
      select 1 from user_profile p
      where p.user_id = wanted_user and p.site_id <> wanted_site
        and (p.created_at, p.id) < coalesce(
          (select (q.created_at, q.id) from user_profile q where q.user_id = wanted_user and q.site_id = wanted_site order by q.created_at, q.id limit 1),
          ('infinity'::timestamptz, ''::text)))
    or exists (select 1 from user_profile p where p.user_id = wanted_user and p.site_id <> wanted_site and p.role in ('admin', 'dispatcher', 'driver'))
    or exists (select 1 from app_user u where u.id = wanted_user and (u.is_platform_operator or u.is_service_account))
    into elsewhere;
  perform set_config('app.platform', coalesce(previous, ''), true);
  return elsewhere;
end $$;
`);
  }
}
