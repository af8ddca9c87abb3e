import { Migration } from '@mikro-orm/migrations';

/**
 * Dispatch (spec "Dispatch"): one record per dispatch decision or pool offer, with the decision's explanation; the
 * site's dispatch settings (strategy, auto dispatch); and the round-robin cursors (per site and per team), which
 * are the dispatcher actor's only persisted strategy state (DESIGN §2).
 *
 * `dispatch_one_active_per_job` is the claim race's second wall: at most one active dispatch per job, whatever
 * the number of processes. Jobs, routes, drivers and vehicles are referred to by id without foreign keys, like the
 * worker table does: their own modules own their lifecycle.
 */
export class Dispatch0010 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table dispatch (
  id text primary key, site_id text not null references site(id) deferrable initially deferred,
  job_id text, route_id text, team_id text, assigned_to_driver_id text, assigned_to_vehicle_id text,
  method text not null check (method in ('manual', 'opt-in', 'round-robin', 'priority', 'load-balanced', 'zone-based', 'team', 'auto')),
  status text not null check (status in ('pending', 'processing', 'completed')),
  require_confirmation boolean not null default false,
  driver_accepted boolean not null default false, driver_accepted_at timestamptz,
  dispatch_at timestamptz, dispatched_at timestamptz, completed_at timestamptz, posted_at timestamptz,
  decision jsonb, plan jsonb, created_by_user_id text, is_active boolean not null default true,
  version integer not null default 1, created_at timestamptz not null, updated_at timestamptz not null);
create index dispatch_site_created_idx on dispatch (site_id, created_at);
create index dispatch_site_job_idx on dispatch (site_id, job_id);
create index dispatch_pool_idx on dispatch (site_id, posted_at) where method = 'opt-in' and status = 'pending' and is_active;
create unique index dispatch_one_active_per_job on dispatch (job_id) where is_active and job_id is not null and status <> 'completed';

create table dispatch_settings (
  site_id text primary key references site(id) deferrable initially deferred,
  strategy text not null default 'load-balanced' check (strategy in ('round-robin', 'priority', 'load-balanced', 'zone-based')),
  auto_dispatch boolean not null default false,
  created_at timestamptz not null, updated_at timestamptz not null);
create index dispatch_settings_auto_idx on dispatch_settings (auto_dispatch) where auto_dispatch;

create table dispatch_cursor (
  site_id text not null references site(id) deferrable initially deferred,
  scope_key text not null, last_driver_id text, updated_at timestamptz not null,
  primary key (site_id, scope_key));
`);
    for (const table of ['dispatch', 'dispatch_settings', 'dispatch_cursor']) {
      this.addSql(`alter table ${table} enable row level security; alter table ${table} force row level security;
        create policy ${table}_tenant on ${table} using (site_id = app_site() or app_is_platform());`);
    }
  }
}
