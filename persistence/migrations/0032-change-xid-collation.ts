import { Migration } from '@mikro-orm/migrations';

/**
 * The `(site_id, change_xid)` indexes (migration 0019) compare `site_id` under the "C" collation, and the dispatch
 * head read names it (`j.site_id collate "C" = s.id`), so each is the only index its changes read can use. The head
 * read runs prepared with a generic plan, made once per connection on the statistics of the moment: made while the
 * tables were small and never analyzed, every index leading with `site_id` cost one row, and the planner took
 * `job_site_driver_idx` / `driver_state_availability_idx` and filtered every job or driver of the site by its
 * `change_xid`, on each dispatch, for as long as the connection lived (bench/dispatch-timeline.ts: 337 buffers per
 * head read, 27 with this). `driver_state_availability_idx` goes: no statement reads drivers by availability, and
 * it won the same tie against the primary key for a driver looked up by id. Both collations are deterministic, so
 * equality is byte equality under either. Built inside the migration's transaction, so not concurrently.
 */
export class ChangeXidCollation0032 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
drop index driver_state_availability_idx;
drop index driver_state_change_xid_idx;
create index driver_state_change_xid_idx on driver_state ((site_id collate "C"), change_xid);
drop index job_change_xid_idx;
create index job_change_xid_idx on job ((site_id collate "C"), change_xid);
`);
  }
}
