import { Migration } from '@mikro-orm/migrations';

/**
 * `dispatch_plan_holds`: the check at the end of a dispatch written from memory (engine/dispatch/dispatch-planned.ts).
 * Such a dispatch is planned from the driver's open route as this process last wrote it (or from the process having
 * none) and its statement goes out with the command's next one, its result unread: so the statement checks itself.
 * It compares what it wrote with what was planned: the route it joined or created (`chosen_route`) and that route's
 * version before the join (`found_version`, null for a route it created), the job row and the stop moves written;
 * any difference (another process opened, moved or ended the route; the job or a stop changed) raises SQLSTATE
 * `DP001`, which rolls the whole transaction back (nothing of the plan stays written) and makes the engine run the
 * command again on reads. Returns true otherwise.
 */
export class DispatchPlanCheck0023 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function dispatch_plan_holds(planned_route text, planned_version int, chosen_route text, found_version int,
  job_written boolean, stops_planned int, stops_written int) returns boolean language plpgsql as $$
begin
  if chosen_route is distinct from planned_route or found_version is distinct from planned_version
     or not coalesce(job_written, false) or stops_written is distinct from stops_planned then
    raise exception 'dispatch plan no longer holds: route % (version %) planned, route % (version %) found; job written: %; stops % of %',
      planned_route, planned_version, chosen_route, found_version, coalesce(job_written, false), stops_written, stops_planned
      using errcode = 'DP001';
  end if;
  return true;
end $$;
`);
  }
}
