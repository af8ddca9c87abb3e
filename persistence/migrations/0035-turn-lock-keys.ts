import { Migration } from '@mikro-orm/migrations';

/**
 * The advisory-lock keys by which the stop moves of one job (and the job moves of one route) take turns, as functions:
 * the engine's read path (`select pg_advisory_xact_lock(job_stops_turn_key(?, ?))`, engine/commands/cascade-rules.ts
 * and engine/routes/route-cascades.ts) and the checks queued with a COMMIT (migration 0034, redefined here to call
 * them) must take the same lock, and the key's text was written out in both places. Each key is the `hashtext` the
 * earlier code took, so a process still running the earlier code takes the same lock during a deploy. Plain SQL and
 * immutable: PostgreSQL inlines them into the statement that calls them.
 */
export class TurnLockKeys0035 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function job_stops_turn_key(wanted_job text, wanted_site text) returns integer language sql immutable parallel safe as $$
  select hashtext('job-stops:' || wanted_site || ':' || wanted_job)
$$;

create function route_jobs_turn_key(wanted_route text, wanted_site text) returns integer language sql immutable parallel safe as $$
  select hashtext('route-jobs:' || wanted_site || ':' || wanted_route)
$$;

create or replace function job_stops_left_open(wanted_job text, wanted_site text) returns boolean language plpgsql as $$
begin
  perform pg_advisory_xact_lock(job_stops_turn_key(wanted_job, wanted_site));
  if not exists (select 1 from stop where job_id = wanted_job and site_id = wanted_site and phase not in ('completed', 'cancelled')) then
    raise exception 'every stop of job % ended meanwhile', wanted_job using errcode = 'DP001';
  end if;
  return true;
end $$;

create or replace function route_jobs_left_open(wanted_route text, wanted_site text) returns boolean language plpgsql as $$
begin
  perform pg_advisory_xact_lock(route_jobs_turn_key(wanted_route, wanted_site));
  if not exists (select 1 from job where route_id = wanted_route and site_id = wanted_site and deleted_at is null and phase not in ('completed', 'cancelled')) then
    raise exception 'every job of route % ended meanwhile', wanted_route using errcode = 'DP001';
  end if;
  return true;
end $$;
`);
  }
}
