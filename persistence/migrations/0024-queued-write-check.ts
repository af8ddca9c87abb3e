import { Migration } from '@mikro-orm/migrations';

/**
 * `queued_write_holds`: the check at the end of a write queued to go out with a transaction's next statement, its
 * result unread (engine/runtime/deferred-writes.ts): a stop's versioned update in a job's cascade, whose row the job's
 * statement locked. Within one transaction another unit of a group-commit batch can still have moved that row first;
 * the write then changes nothing, and this raises SQLSTATE `DP001` (as `dispatch_plan_holds` does), which rolls the
 * transaction back: the batch runs again with each command in a savepoint of its own, where the race is reported
 * to that command. Returns true otherwise.
 */
export class QueuedWriteCheck0024 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function queued_write_holds(written boolean, what text) returns boolean language plpgsql as $$
begin
  if not coalesce(written, false) then
    raise exception 'queued write no longer holds: % changed before it was written', what using errcode = 'DP001';
  end if;
  return true;
end $$;
`);
  }
}
