import { Migration } from '@mikro-orm/migrations';

/**
 * The site whose staff chose an account's password (`POST /customer {password}`, `PUT /user {password}`), null when
 * the user chose it (a reset link, their own change) or the platform did. Accounts are shared between sites: a site
 * that later takes on the same person (a customer found by email) would otherwise accept a password the first
 * site's staff know, so their staff could sign in there as that person. Such a password signs in on its own site
 * only; elsewhere the user sets their own first.
 */
export class PasswordSetBySite0039 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table app_user add column password_set_by_site_id text null;');
  }
}
