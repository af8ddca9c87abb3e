import { Migration } from '@mikro-orm/migrations';

/**
 * The append-only logs (`audit_record`, `outbox`) no longer check their `site_id` against `site` (issue 3
 * benchmark). The deferred foreign keys ran one lookup per inserted row at COMMIT (an SPI query, and a FOR KEY SHARE
 * lock on the site row that every concurrent transaction shares): four per job command (two audit records, two
 * events), about 6 µs of PostgreSQL CPU per row, a twentieth of a job command's. They guarded nothing the writers do
 * not: every row is written in its tenant's transaction (`app.site_id`, which row-level security holds it to), a
 * site is never deleted, and the logs are never updated. `site_id` stays `not null` on the outbox; the indexes that
 * lead on it stay.
 */
export class LogSiteKeys0025 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table audit_record drop constraint if exists audit_record_site_id_fkey;
alter table outbox drop constraint if exists outbox_site_id_fkey;
`);
  }
}
