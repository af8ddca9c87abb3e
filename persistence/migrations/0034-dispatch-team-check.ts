import { Migration } from '@mikro-orm/migrations';

/**
 * `dispatch_team_holds`: a team dispatch's check that its team is an active team of the site, queued to go out with
 * the dispatch's first read (its head read) instead of a round trip of its own (engine/dispatch/team-check.ts). Its
 * result is unread, so it raises SQLSTATE `DT404` when the team is missing, inactive or another site's (row-level
 * security hides those too), which fails the transaction before anything is written; the engine answers 404.
 * Returns true otherwise.
 */
export class DispatchTeamCheck0034 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function dispatch_team_holds(wanted_team text, wanted_site text) returns boolean language plpgsql as $$
begin
  if not exists (select 1 from team where id = wanted_team and site_id = wanted_site and is_active) then
    raise exception 'team % not found', wanted_team using errcode = 'DT404';
  end if;
  return true;
end $$;
`);
  }
}
