import { Migration } from '@mikro-orm/migrations';

/**
 * The checks a stop move queues with its COMMIT instead of reading again in a round trip of its own
 * (engine/commands/cascade-rules.ts, engine/routes/route-cascades.ts): when the move's reads left another stop of
 * its job open (or another job of its route), nothing cascades, unless that stop ended meanwhile in a move these
 * reads could not see. Each takes the same transaction-level advisory lock the read path takes, so of two such
 * moves the second's check runs after the first committed and sees its stop; if every stop of the job (every job
 * of the route) has ended by then, it raises SQLSTATE `DP001`, the transaction fails before anything is written,
 * and the engine runs the command again on reads, which then see every stop ended and complete the job (route).
 * Each function's statements take their own snapshots (volatile plpgsql), so the one after the lock sees what
 * committed while it waited.
 */
export class CascadeChecks0034 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function job_stops_left_open(wanted_job text, wanted_site text) returns boolean language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtext('job-stops:' || wanted_site || ':' || wanted_job));
  if not exists (select 1 from stop where job_id = wanted_job and site_id = wanted_site and phase not in ('completed', 'cancelled')) then
    raise exception 'every stop of job % ended meanwhile', wanted_job using errcode = 'DP001';
  end if;
  return true;
end $$;

create function route_jobs_left_open(wanted_route text, wanted_site text) returns boolean language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtext('route-jobs:' || wanted_site || ':' || wanted_route));
  if not exists (select 1 from job where route_id = wanted_route and site_id = wanted_site and deleted_at is null and phase not in ('completed', 'cancelled')) then
    raise exception 'every job of route % ended meanwhile', wanted_route using errcode = 'DP001';
  end if;
  return true;
end $$;
`);
  }
}
