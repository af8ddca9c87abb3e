import { Migration } from '@mikro-orm/migrations';

/**
 * `job_change_xid_idx` (migration 0019) compares `site_id` under the "C" collation, and the dispatch head read joins
 * `j.site_id collate "C" = s.id`, so that index is the only one of `job` the read's site condition can use. The read
 * runs prepared with a generic plan, made once per connection on the statistics of the moment: made while `job` was
 * small and never analyzed, every index leading with `site_id` cost one row, and the planner took
 * `job_site_driver_idx` and filtered each job of the site by its `change_xid`, per dispatch, for as long as the
 * connection lived (3,001 rows removed by filter, 337 buffers, on a site grown to 3,000 jobs). Site ids are ASCII
 * keys: equality is the same under either collation. Built in the migration's transaction, so not concurrently.
 */
export class JobChangeXidCollation0032 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
drop index job_change_xid_idx;
create index job_change_xid_idx on job ((site_id collate "C"), change_xid);
`);
  }
}
