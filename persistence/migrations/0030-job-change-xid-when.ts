import { Migration } from '@mikro-orm/migrations';

/**
 * A job's move stamps `change_xid` itself (`move-update.ts` sets `change_xid = pg_current_xact_id()` with the phase),
 * so the BEFORE trigger of migration 0019 skips such an update: its call of the PL/pgSQL function was per-row work on
 * every job command (the engine bench, issue 3). Every other update of those columns (the ORM's edits, a dispatch)
 * leaves `change_xid` as it was and is stamped by the trigger as before; an update by a transaction that already
 * stamped the row sets the same value either way. Inserts keep their own trigger.
 */
export class JobChangeXidWhen0030 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
drop trigger job_change_xid on job;
create trigger job_change_xid before insert on job for each row execute function stamp_change_xid();
create trigger job_change_xid_update before update of phase, driver_user_id, deleted_at, site_id on job
  for each row when (new.change_xid = old.change_xid) execute function stamp_change_xid();`);
  }
}
