import { Migration } from '@mikro-orm/migrations';

/**
 * Drops the GIN indexes on `job.custom_fields` and `stop.custom_fields` (migration 0012): no query of the app can use
 * them. The app's role is subject to row-level security (FORCE, no BYPASSRLS), and PostgreSQL evaluates a query's
 * own conditions after the policy's only if they are leakproof; `jsonb @>` is not, so it is never an index condition
 * (the job search's `custom_fields @> ?` runs as a filter, even with `enable_seqscan` off). Yet a job's move changes
 * indexed columns, so it is never a HOT update and each move inserted the row into this index too: one GIN
 * pending-list insert (a metapage record in the WAL) per job command in bench:engine.
 */
export class DropCustomFieldIndexes0028 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
drop index job_custom_fields_idx;
drop index stop_custom_fields_idx;`);
  }
}
