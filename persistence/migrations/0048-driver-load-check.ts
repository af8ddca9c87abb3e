import { Migration } from '@mikro-orm/migrations';

/**
 * `dispatch_load_holds(site, driver, job)`: a driver's `max_load` checked where a dispatch writes, not only where it
 * was decided (engine/dispatch/driver-load-check.ts). The decision reads the driver's load from the process's index,
 * without a lock, so two dispatches to the same driver (in one process or several, on one day or two: the driver-day
 * locks are per date) could both see room for one more job. The function takes a transaction-scoped advisory lock
 * of the driver (`driver-load:<site>:<driver>`), then counts the driver's open jobs other than `job` (this
 * transaction's own included); being VOLATILE, its count takes a snapshot after the lock is granted, so it sees the
 * job of a dispatch that held the lock before and committed. At or past `max_load` it raises SQLSTATE `DP001`, as a
 * dispatch plan that no longer holds does (migration 0023): the transaction rolls back and the engine runs the
 * command again on fresh reads, where the decision sees the driver at capacity. A driver without a `max_load`
 * passes (the caller does not send the check for one).
 */
export class DriverLoadCheck0048 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function dispatch_load_holds(p_site text, p_driver text, p_job text) returns boolean language plpgsql volatile as $$
declare
  most int;
  open_jobs int;
begin
  perform pg_advisory_xact_lock(hashtext('driver-load:' || p_site || ':' || p_driver));
  select w.max_load into most from worker w where w.site_id = p_site and w.user_id = p_driver;
  if most is null then
    return true;
  end if;
  select count(*) into open_jobs from job j
    where j.site_id = p_site and j.driver_user_id = p_driver and j.phase in ('assigned', 'in_progress') and j.deleted_at is null and j.id <> p_job;
  if open_jobs >= most then
    raise exception 'driver % has % open jobs, their max_load is %', p_driver, open_jobs, most using errcode = 'DP001';
  end if;
  return true;
end $$;
`);
  }
}
